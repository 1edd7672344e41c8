"""The API's list of named endpoints: what a script needs to choose one for `POST /api/runs/`
(its name, address, model and limits). Read-only: endpoints are made and changed on
/endpoints/, where an address is checked before it is saved. Never a key: only the name of the
variable that holds it, and whether it is set where this server runs."""

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView

from core.roles import Role, role_permission
from llm.models import Endpoint
from llm.selectors import endpoint_list, key_is_set


class EndpointListApi(ListAPIView):
    """The named endpoints of the person's workspaces (the default one, set in the environment,
    is shown on /endpoints/)."""

    permission_classes = [role_permission(Role.RESEARCHER)]

    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Endpoint"

        name = serializers.CharField()
        workspace = serializers.CharField(source="workspace.slug", allow_null=True)
        base_url = serializers.CharField()
        api_key_env = serializers.CharField(help_text="The variable holding the key; the key is never shown.")
        key_set = serializers.SerializerMethodField(help_text="Whether that variable is set where this server runs.")
        default_model = serializers.CharField()
        max_in_flight = serializers.IntegerField(allow_null=True, help_text="Null: auto.")
        requests_per_minute = serializers.IntegerField(allow_null=True)
        tokens_per_minute = serializers.IntegerField(
            allow_null=True, help_text="Prompt tokens (estimated) plus max_tokens per minute."
        )
        timeout_seconds = serializers.FloatField(allow_null=True, help_text="Null: long enough for the reply asked.")
        max_retries = serializers.IntegerField()
        max_tokens = serializers.IntegerField(allow_null=True, help_text="Null: each kind of call's default.")
        input_price_per_million = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
        output_price_per_million = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
        batch_input_price_per_million = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)
        batch_output_price_per_million = serializers.DecimalField(max_digits=10, decimal_places=4, allow_null=True)

        @extend_schema(responses=bool)
        def get_key_set(self, endpoint: Endpoint) -> bool:
            return key_is_set(variable=endpoint.api_key_env)

    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Endpoint]:
        return endpoint_list(user=self.request.user)
