from django.db import migrations, models


class Migration(migrations.Migration):
    """``ReleaseSplits.applied``: the rows recorded so far were copied onto the items in their build's
    transaction, so they start applied; a build records new ones pending and copies them after."""

    dependencies = [
        ('exports', '0004_release_splits'),
    ]

    operations = [
        migrations.AddField(
            model_name='releasesplits',
            name='applied',
            field=models.BooleanField(default=True),
        ),
        migrations.AlterField(
            model_name='releasesplits',
            name='applied',
            field=models.BooleanField(default=False),
        ),
    ]
