"""The API's pagination, on its own: DRF imports it while its generic views load, so it may not
import views (core/api.py does)."""

from rest_framework.pagination import LimitOffsetPagination

from core.params import MAX_ID, int_param


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """DRF's limit and offset, read as whole numbers in range: a 20-digit `limit` or `offset`
    reached the database as is, which refused it (a 500 on every list route). Now it is a 400
    naming the parameter."""

    max_limit = 1000

    def get_limit(self, request):
        raw = request.query_params.get(self.limit_query_param)
        return int_param(raw, name=self.limit_query_param, low=1, high=self.max_limit, default=self.default_limit)

    def get_offset(self, request):
        raw = request.query_params.get(self.offset_query_param)
        return int_param(raw, name=self.offset_query_param, low=0, high=MAX_ID, default=0)
