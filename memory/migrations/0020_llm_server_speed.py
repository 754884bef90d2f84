"""How fast each LLM server generates (``LLMServerSpeed``): request budgets are derived from
it. docs/llm-servers.md, "Budgets"."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0019_note_source_messages'),
    ]

    operations = [
        migrations.CreateModel(
            name='LLMServerSpeed',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('base_url', models.CharField(max_length=500, verbose_name='base url')),
                ('model', models.CharField(max_length=200, verbose_name='model')),
                ('tokens_per_second', models.FloatField(help_text='Generation speed, averaged over the recent replies.', verbose_name='tokens per second')),
                ('samples', models.PositiveIntegerField(default=0, verbose_name='samples')),
                ('measured_at', models.DateTimeField(verbose_name='measured at')),
            ],
            options={
                'verbose_name': 'LLM server speed',
                'verbose_name_plural': 'LLM server speeds',
                'ordering': ['base_url', 'model'],
                'constraints': [models.UniqueConstraint(fields=('base_url', 'model'), name='llm_server_speed_unique')],
            },
        ),
    ]
