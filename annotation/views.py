from django.shortcuts import render

from annotation.access import annotator_required
from annotation.selectors import campaigns_for_annotator


@annotator_required
def annotate_index(request):
    """The campaigns this annotator works in, with their own progress."""
    return render(request, "annotation/index.html", {"campaigns": campaigns_for_annotator(request.user)})
