from django.db import migrations, models


class Migration(migrations.Migration):
    """The retrieval plan saved with each chat reply (docs/chat-page.md)."""

    dependencies = [
        ("memory", "0008_llm_server_modes"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="recall_plan",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="The retrieval plan of this answer (layers in order, cues), shown with its recalled notes.",
                verbose_name="recall plan",
            ),
        ),
    ]
