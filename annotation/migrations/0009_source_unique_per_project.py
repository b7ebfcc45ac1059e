from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0008_source_per_project'),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='source',
            constraint=models.UniqueConstraint(fields=('project', 'name'), name='source_unique_per_project'),
        ),
    ]
