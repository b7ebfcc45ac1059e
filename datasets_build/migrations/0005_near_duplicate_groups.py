"""Near duplicates are stored as groups, one row per item, instead of one row per pair.

The pair table is renamed out of the way, the group table created, every project's pairs joined into groups
(union-find; a group is named by its first item) with each item's most similar earlier item kept, and the
pair table dropped. Going back writes each grouped item's link as a pair again."""

import django.db.models.deletion
from django.db import migrations, models


def pairs_to_groups(apps, schema_editor):
    pairs = apps.get_model("datasets_build", "NearDuplicatePair")
    groups = apps.get_model("datasets_build", "NearDuplicate")
    for project_id in pairs.objects.values_list("project_id", flat=True).distinct().order_by():
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        best: dict[int, tuple[float, int]] = {}
        for item, other, similarity in pairs.objects.filter(project_id=project_id).values_list(
                "item_id", "duplicate_of_id", "similarity").iterator(chunk_size=10_000):
            a, b = find(item), find(other)
            parent[max(a, b)] = min(a, b)
            later, earlier = max(item, other), min(item, other)
            if later not in best or (-similarity, earlier) < (-best[later][0], best[later][1]):
                best[later] = (similarity, earlier)
        groups.objects.bulk_create([
            groups(project_id=project_id, item_id=item, group=find(item),
                   duplicate_of_id=best[item][1] if item in best else None,
                   similarity=best[item][0] if item in best else None)
            for item in sorted(parent)], batch_size=5_000)


def groups_to_pairs(apps, schema_editor):
    pairs = apps.get_model("datasets_build", "NearDuplicatePair")
    groups = apps.get_model("datasets_build", "NearDuplicate")
    pairs.objects.bulk_create([
        pairs(project_id=row.project_id, item_id=row.item_id, duplicate_of_id=row.duplicate_of_id,
              similarity=row.similarity)
        for row in groups.objects.exclude(duplicate_of=None).iterator(chunk_size=10_000)], batch_size=5_000)


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0007_import_indexes'),
        ('datasets_build', '0004_minhash_band_composite_key'),
    ]

    operations = [
        migrations.RenameModel('NearDuplicate', 'NearDuplicatePair'),
        migrations.AlterField(
            model_name='nearduplicatepair', name='project',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+',
                                    to='annotation.project'),
        ),
        migrations.CreateModel(
            name='NearDuplicate',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('group', models.BigIntegerField()),
                ('similarity', models.FloatField(blank=True, null=True)),
                ('duplicate_of', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True,
                                                   on_delete=django.db.models.deletion.SET_NULL, related_name='+',
                                                   to='annotation.item')),
                ('item', models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.CASCADE,
                                              related_name='near_duplicate', to='annotation.item')),
                ('project', models.ForeignKey(db_constraint=False, db_index=False,
                                              on_delete=django.db.models.deletion.CASCADE,
                                              related_name='near_duplicates', to='annotation.project')),
            ],
            options={
                'indexes': [models.Index(fields=['project', 'group'], name='near_duplicate_group')],
            },
        ),
        migrations.RunPython(pairs_to_groups, groups_to_pairs),
        migrations.DeleteModel('NearDuplicatePair'),
    ]
