import os
import threading

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Every view is imported with the URLconf (DRF, the API schema, the apps' services): about two
# seconds that a web process would otherwise spend on its first request, whatever it asks for.
# Paid here, as the process starts (bench/bench_first_export.py; runserver's checks do the same).
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018  (the attribute's read imports the URLconf)

# The openai SDK takes about two seconds to import (more on a busy machine). Each web process
# imports it in the background as it starts, so the first "Test connection" waits for its own
# call and not for the import (bench/bench_connection_test.py measures both).
from llm.sdk import load_sdk  # noqa: E402  (after the app registry is ready)

threading.Thread(target=load_sdk, name="openai-sdk-import", daemon=True).start()
