import hashlib

from django.core.files.storage import default_storage
from django.db import migrations, models


def record_digests(apps, schema_editor):
    """Attachments stored before digests were recorded: their bytes as they are now.

    A file missing from storage keeps an empty digest; its download then answers 404.
    The live row's other columns are left alone (``update``), so it still equals its
    newest history row.
    """
    answer_model = apps.get_model("assessments", "AssessmentAnswer")
    for pk, name in answer_model.objects.exclude(attachment="").values_list("pk", "attachment"):
        digest = hashlib.sha256()
        try:
            with default_storage.open(name, "rb") as handle:
                while chunk := handle.read(1024 * 1024):
                    digest.update(chunk)
        except FileNotFoundError:
            continue
        answer_model.objects.filter(pk=pk).update(attachment_sha256=digest.hexdigest())


class Migration(migrations.Migration):
    dependencies = [
        ("assessments", "0002_alter_historicalassessmentanswer_history_change_reason_and_more"),
    ]

    operations = [
        migrations.AddField(
            model_name="assessmentanswer",
            name="attachment_sha256",
            field=models.CharField(
                blank=True, editable=False, max_length=64, verbose_name="attachment SHA-256"
            ),
        ),
        migrations.RunPython(record_digests, migrations.RunPython.noop, elidable=True),
    ]
