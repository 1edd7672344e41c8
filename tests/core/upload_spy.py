"""An upload handler that records how many bytes of file parts Django received, and passes them
on to the usual handlers: what a request made the server read and store."""

from django.core.files.uploadhandler import FileUploadHandler

RECEIVED: list[int] = []


class SpyUploadHandler(FileUploadHandler):
    def receive_data_chunk(self, raw_data, start):
        RECEIVED.append(len(raw_data))
        return raw_data

    def file_complete(self, file_size):
        return None
