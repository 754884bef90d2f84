"""``TurnExtraction.added``: what the client-facts floor added (it was kept among the refused
items, ``rejected``, which an auditor then misread). Lines already written move over."""
from django.db import migrations, models

ADDED_PREFIX = "added from the client's words"


def move_added_lines(apps, schema_editor):
    TurnExtraction = apps.get_model("memory", "TurnExtraction")
    moved = []
    for turn in TurnExtraction.objects.filter(rejected__icontains=ADDED_PREFIX).only("pk", "rejected").iterator():
        turn.added = [line for line in turn.rejected if str(line).startswith(ADDED_PREFIX)]
        turn.rejected = [line for line in turn.rejected if not str(line).startswith(ADDED_PREFIX)]
        moved.append(turn)
        if len(moved) >= 500:
            TurnExtraction.objects.bulk_update(moved, ["added", "rejected"])
            moved = []
    TurnExtraction.objects.bulk_update(moved, ["added", "rejected"])


def keep_added_lines_among_rejected(apps, schema_editor):
    TurnExtraction = apps.get_model("memory", "TurnExtraction")
    moved = []
    for turn in TurnExtraction.objects.exclude(added=[]).only("pk", "rejected", "added").iterator():
        turn.rejected = [*turn.rejected, *turn.added]
        moved.append(turn)
    TurnExtraction.objects.bulk_update(moved, ["rejected"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0025_document_worker_liveness"),
    ]

    operations = [
        migrations.AddField(
            model_name="turnextraction",
            name="added",
            field=models.JSONField(
                blank=True, default=list, verbose_name="added",
                help_text="Items added from the client's own words that the model left out, with reasons.",
            ),
        ),
        migrations.RunPython(move_added_lines, keep_added_lines_among_rejected),
    ]
