"""Output serializers of a run's diagnostics (judging/results/diagnostics.py), so the OpenAPI
schema describes every figure the endpoint returns. Rates are fractions in [0, 1]."""

from rest_framework import serializers


class ProportionSerializer(serializers.Serializer):
    class Meta:
        ref_name = "DiagnosticProportion"

    successes = serializers.IntegerField(help_text="Events counted (flips, failures, agreements).")
    trials = serializers.IntegerField()
    rate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True, help_text="Wilson 95% interval, lower end.")
    high = serializers.FloatField(allow_null=True, help_text="Wilson 95% interval, upper end.")


class JudgePositionBiasSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgePositionBias"

    first_wins = serializers.IntegerField()
    second_wins = serializers.IntegerField()
    decisive = serializers.IntegerField(help_text="Verdicts that named a winner.")
    first_rate = serializers.FloatField(
        allow_null=True, help_text="Share of decisive verdicts won by the first position."
    )
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True, help_text="Exact binomial test against one half.")
    ties = serializers.IntegerField()
    failures = serializers.IntegerField(help_text="Parse failures, left out of the rate.")


class FlipRateSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeFlipRate"

    pairs = serializers.IntegerField(help_text="Pairs judged and parsed in both orders.")
    incomplete = serializers.IntegerField()
    flips = ProportionSerializer(help_text="The winner reverses when the answers swap places.")
    changes = ProportionSerializer(help_text="Reversals plus a winner turning into a tie or back.")
    flips_to_first = serializers.IntegerField(help_text="Flips where the first-shown answer won both times.")
    flips_to_second = serializers.IntegerField()


class LengthBiasSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeLengthBias"

    kind = serializers.ChoiceField(choices=["pairwise", "pointwise"])
    n = serializers.IntegerField()
    slope = serializers.FloatField(
        allow_null=True,
        help_text="Pairwise: log-odds that the first answer wins per unit of (a - b) / (a + b) of the lengths. "
        "Pointwise: score points per standard deviation of length, within questions.",
    )
    se = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True)
    reason = serializers.CharField(allow_null=True, help_text="Why no slope was fitted.")
    method = serializers.CharField(required=False, help_text="Pairwise: how the length difference is normalised.")
    intercept = serializers.FloatField(required=False, allow_null=True)
    intercept_se = serializers.FloatField(required=False, allow_null=True)
    first_rate_at_equal_length = serializers.FloatField(required=False, allow_null=True)
    first_rate_low = serializers.FloatField(required=False, allow_null=True)
    first_rate_high = serializers.FloatField(required=False, allow_null=True)
    groups = serializers.IntegerField(required=False, allow_null=True, help_text="Pointwise: questions absorbed.")
    length_sd = serializers.FloatField(required=False, allow_null=True, help_text="Pointwise: characters per SD.")


class GroupMeanSerializer(serializers.Serializer):
    class Meta:
        ref_name = "DiagnosticGroupMean"

    n = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)


class CandidateMeanSerializer(serializers.Serializer):
    class Meta:
        ref_name = "DiagnosticCandidateMean"

    candidate = serializers.CharField()
    same_family = serializers.BooleanField()
    n = serializers.IntegerField()
    mean = serializers.FloatField()


class SelfPreferenceSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeSelfPreference"

    judge_family = serializers.CharField(allow_blank=True)
    judge_provider = serializers.CharField(allow_blank=True)
    measure = serializers.ChoiceField(choices=["win", "score"], help_text="Wins (pairwise) or final scores.")
    same = GroupMeanSerializer(help_text="Candidates sharing the judge's provider or family.")
    other = GroupMeanSerializer()
    advantage = serializers.FloatField(allow_null=True, help_text="Mean of the same family minus the others'.")
    low = serializers.FloatField(allow_null=True, help_text="Welch t 95% interval.")
    high = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True)
    by_candidate = CandidateMeanSerializer(many=True)
    reason = serializers.CharField(allow_null=True)


class FailureGroupSerializer(serializers.Serializer):
    class Meta:
        ref_name = "ParseFailureGroup"

    group = serializers.DictField(child=serializers.CharField(), help_text="template and language.")
    failures = serializers.IntegerField()
    total = serializers.IntegerField()
    rate = serializers.FloatField()
    low = serializers.FloatField()
    high = serializers.FloatField()


class ParseFailuresSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeParseFailures"

    by = serializers.ListField(child=serializers.CharField())
    overall = ProportionSerializer()
    groups = FailureGroupSerializer(many=True)


class DisagreementSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeHumanDisagreement"

    item_id = serializers.IntegerField(help_text="Opens at /review/items/<item_id>/.")
    external_id = serializers.CharField()
    first_model = serializers.CharField(help_text="The alphabetically first model of the pair.")
    second_model = serializers.CharField()
    judge = serializers.CharField(help_text="first, second or tie: which model of the pair the judge preferred.")
    majority = serializers.CharField(allow_null=True, help_text="The human majority (first, second, tie), or null.")
    votes = serializers.DictField(child=serializers.IntegerField())
    kind = serializers.CharField()
    strength = serializers.FloatField(help_text="2: a unanimous reversal; 1: a judge tie against unanimous humans.")


class HumanAgreementSerializer(serializers.Serializer):
    class Meta:
        ref_name = "JudgeHumanAgreement"

    shared = serializers.IntegerField(help_text="Questions and model pairs with human votes and a judge verdict.")
    no_majority = serializers.IntegerField()
    kappa = serializers.FloatField(allow_null=True)
    kappa_low = serializers.FloatField(allow_null=True, help_text="Bootstrap over items.")
    kappa_high = serializers.FloatField(allow_null=True)
    kappa_note = serializers.CharField(allow_null=True)
    agreement = ProportionSerializer()
    agreement_without_ties = ProportionSerializer()
    disagreement_count = serializers.IntegerField()
    disagreements = DisagreementSerializer(many=True, help_text="The strongest disagreements first.")


class RunDiagnosticsSerializer(serializers.Serializer):
    class Meta:
        ref_name = "RunDiagnostics"

    run = serializers.IntegerField()
    mode = serializers.CharField()
    level = serializers.FloatField(help_text="Confidence level of every interval.")
    judgments = serializers.IntegerField(help_text="Replied judgments of real candidates.")
    position_bias = JudgePositionBiasSerializer(allow_null=True, help_text="Pairwise runs only.")
    flip_rate = FlipRateSerializer(allow_null=True, help_text="Pairwise runs only.")
    length_bias = LengthBiasSerializer()
    self_preference = SelfPreferenceSerializer()
    parse_failures = ParseFailuresSerializer()
    human_agreement = HumanAgreementSerializer()
    notes = serializers.DictField(child=serializers.CharField(), help_text="Why a figure is missing.")
