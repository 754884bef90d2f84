"""``Message.repeats_memory``: a reply that holds nothing but what was recalled for it is never
recalled itself (docs/write-path.md, "Only new knowledge"). Answers the offline engine composed
before this column are marked here."""

from django.db import migrations, models


def mark_composed_answers(apps, schema_editor):
    Message = apps.get_model("memory", "Message")
    Message.objects.filter(engine="offline").update(repeats_memory=True)


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0020_llm_server_speed'),
    ]

    operations = [
        migrations.AddField(
            model_name='message',
            name='repeats_memory',
            field=models.BooleanField(default=False, help_text='A reply that holds nothing but what was recalled for it (an answer the offline engine composed, or every sentence a quotation): kept in the conversation, never recalled.', verbose_name='repeats memory'),
        ),
        migrations.RunPython(mark_composed_answers, migrations.RunPython.noop),
    ]
