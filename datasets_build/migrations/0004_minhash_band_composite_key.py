"""MinHashBand's primary key becomes (project, key, item), which the band lookup uses: the id column and its
index go, and so does the (project, key) index the new key's prefix replaces.

Django cannot change a table's primary key to a composite one in place, so the bands move to a new table:
the old model is renamed out of the way, the new one created, the rows copied, the old table dropped."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_import_indexes'),
        ('datasets_build', '0003_import_indexes'),
    ]

    operations = [
        migrations.RenameModel('MinHashBand', 'LegacyMinHashBand'),
        migrations.RemoveIndex(model_name='legacyminhashband', name='minhash_band_project_key'),
        migrations.CreateModel(
            name='MinHashBand',
            fields=[
                ('pk', models.CompositePrimaryKey('project', 'key', 'item', blank=True, editable=False,
                                                  primary_key=True, serialize=False)),
                ('project', models.ForeignKey(db_constraint=False, db_index=False,
                                              on_delete=django.db.models.deletion.CASCADE, related_name='+',
                                              to='annotation.project')),
                ('key', models.BigIntegerField()),
                ('item', models.ForeignKey(db_constraint=False, db_index=False,
                                           on_delete=django.db.models.deletion.CASCADE, related_name='+',
                                           to='annotation.item')),
            ],
        ),
        migrations.RunSQL(
            # ``WHERE true``: SQLite needs it to tell the SELECT from the ON CONFLICT clause.
            'INSERT INTO datasets_build_minhashband (project_id, key, item_id) SELECT project_id, key, item_id '
            'FROM datasets_build_legacyminhashband WHERE true ON CONFLICT DO NOTHING',
            'INSERT INTO datasets_build_legacyminhashband (project_id, key, item_id) SELECT project_id, key, item_id '
            'FROM datasets_build_minhashband',
        ),
        migrations.DeleteModel('LegacyMinHashBand'),
    ]
