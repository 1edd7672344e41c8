"""What the API says of a large upload read by a worker (core/uploads.py), whatever it holds: each
kind's serializer adds what it is for and where to follow it."""

from rest_framework import serializers

from core.uploads import upload_can_discard, upload_can_resume, upload_percent


class BackgroundUploadSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField(help_text="Where to follow it; DELETE there discards it.")
    file_name = serializers.CharField()
    status = serializers.CharField(help_text="queued, running, finished or failed (refused: nothing stored).")
    status_label = serializers.CharField(source="get_status_display")
    size = serializers.IntegerField(help_text="Bytes of the file.")
    bytes_read = serializers.IntegerField()
    lines_read = serializers.IntegerField()
    percent = serializers.SerializerMethodField()
    imported = serializers.IntegerField(help_text="Rows stored, once finished.")
    error = serializers.CharField(help_text="Why it was refused, naming the line; nothing was stored.")
    resumable = serializers.SerializerMethodField(help_text="Its worker stopped: a resume reads it again.")
    discardable = serializers.SerializerMethodField(
        help_text="Refused, or its worker stopped: DELETE on its url removes it and its stored file."
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, upload) -> str:
        raise NotImplementedError  # each kind's own route

    def get_percent(self, upload) -> int:
        return upload_percent(upload)

    def get_resumable(self, upload) -> bool:
        return upload_can_resume(upload)

    def get_discardable(self, upload) -> bool:
        return upload_can_discard(upload)
