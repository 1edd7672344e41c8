"""A judgment refers to the response cache row that holds its reply instead of keeping a second
copy. Judgments saved before keep their own copy (`raw_text`); nothing is moved."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0011_batch_runs"),
        ("llm", "0006_deadline_fits_the_reply"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgment",
            name="response",
            field=models.ForeignKey(
                blank=True,
                db_column="response_key",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="llm.llmresponse",
                to_field="key",
            ),
        ),
    ]
