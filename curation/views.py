from django.shortcuts import render

from curation.access import reviewer_required
from curation.selectors import review_queue_counts


@reviewer_required
def review_index(request):
    """The reviewer's queues and how much waits in each."""
    return render(request, "curation/review_index.html", {"quality": review_queue_counts()})
