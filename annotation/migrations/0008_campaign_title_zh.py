"""A campaign's Chinese title, shown on Chinese pages (the English title while it is empty)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("annotation", "0007_workspace")]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="title_zh",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]
