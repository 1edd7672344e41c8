"""Output serializers of the statistics endpoints, so the OpenAPI schema describes what they return.

Shared by the campaign API views (annotation/api.py); each mirrors a dict that
annotation/report.py builds from the pure statistics modules.
"""

from rest_framework import serializers


class BTScoreSerializer(serializers.Serializer):
    # A declared field, not Field.label: the serializer metaclass takes it out of the class.
    label = serializers.CharField(help_text="Model name (researchers only).")  # type: ignore[assignment]
    score = serializers.FloatField(help_text="Bradley-Terry coefficient (log-strength, centred).")
    lower = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, lower end.")
    upper = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, upper end.")
    rank = serializers.IntegerField(
        help_text="Rank by interval overlap; equal ranks cannot be told apart. See ranks_meaningful."
    )
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    note = serializers.CharField(allow_null=True, help_text="Why the interval has zero width, when it does.")
    elo = serializers.FloatField(help_text="The score on Arena's Elo scale (400 / ln 10 points per unit).")
    elo_lower = serializers.FloatField(allow_null=True, help_text="The interval's lower end in Elo points.")
    elo_upper = serializers.FloatField(allow_null=True, help_text="The interval's upper end in Elo points.")


class TooFewSerializer(serializers.Serializer):
    # A declared field, not Field.label: the serializer metaclass takes it out of the class.
    label = serializers.CharField()  # type: ignore[assignment]
    decisive = serializers.IntegerField(help_text="Wins and losses (ties and cannot-determine left out).")


class SeparationSerializer(serializers.Serializer):
    higher = serializers.CharField(help_text="The model ranked above (by score).")
    lower = serializers.CharField(help_text="Its neighbour below.")
    gap = serializers.FloatField(help_text="Score of the higher minus score of the lower (log-strength).")
    se = serializers.FloatField(help_text="Standard error of the gap, from the fit's Fisher information.")
    separated = serializers.BooleanField(help_text="True when the gap's 95 % interval excludes zero.")
    more_votes = serializers.IntegerField(
        allow_null=True, help_text="About how many more votes, spread as so far, would separate them (0: they are)."
    )
    more_votes_on_pair = serializers.IntegerField(
        allow_null=True, help_text="About how many more careful votes on this pair alone would separate them."
    )


class AnnotatorReliabilitySerializer(serializers.Serializer):
    # A declared field, not Field.label: the serializer metaclass takes it out of the class.
    label = serializers.CharField(help_text="The annotator.")  # type: ignore[assignment]
    reliability = serializers.FloatField(
        allow_null=True, help_text="1 careful, 0.5 voting at random, 0 voting against the truth (decisive votes)."
    )
    lower = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, lower end.")
    upper = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, upper end.")
    votes = serializers.IntegerField(help_text="Votes fitted (ties included).")
    decisive = serializers.IntegerField(help_text="Votes for one model.")
    weight = serializers.FloatField(help_text="How much the fit weighs their votes (ties included).")
    anchor = serializers.BooleanField(help_text="Taken as careful to anchor the fit (no gold votes).")
    flags = serializers.ListField(child=serializers.CharField(), help_text="'careless' or 'adversarial'.")


class BTReportSerializer(serializers.Serializer):
    class Meta:
        ref_name = "BTReport"

    scores = BTScoreSerializer(many=True)
    disconnected = serializers.ListField(child=serializers.CharField(), help_text="Models the votes do not connect.")
    comparisons = serializers.IntegerField(help_text="Votes in the fit (ties count once).")
    alpha = serializers.FloatField(help_text="Regularisation of the fit (0: plain maximum likelihood).")
    # Figures stored before the fit said which it used have neither: null then.
    regularised = serializers.BooleanField(
        allow_null=True,
        default=None,
        help_text="False when the comparison graph is strongly connected and the fit is FastChat's "
        "unregularised one; True where the graph needs regularisation (or alpha was asked for).",
    )
    regularisation = serializers.CharField(
        allow_null=True, default=None, help_text="Which fit was used and why (the models that needed it)."
    )
    scale = serializers.CharField(default="log-strength", help_text="What `score` is: natural-log strengths.")
    elo_anchor = serializers.CharField(
        allow_null=True, help_text="Model that reads exactly elo_rating on the Elo scale; null: the mean model."
    )
    elo_rating = serializers.FloatField(help_text="Rating of the anchor (or of the mean model).")
    elo_points_per_unit = serializers.FloatField(help_text="Elo points per unit of log-strength: 400 / ln 10.")
    bootstrap_rounds = serializers.IntegerField()
    skipped_rounds = serializers.IntegerField(help_text="Bootstrap rounds with no finite estimate (alpha = 0).")
    level = serializers.FloatField(help_text="Confidence level of the intervals.")
    votes = serializers.IntegerField()
    cannot_determine = serializers.IntegerField(help_text="Votes left out of the fit.")
    excluded_annotators = serializers.ListField(child=serializers.CharField())
    ranks_meaningful = serializers.BooleanField(
        help_text="False when a ranked model has fewer than min_decisive decisive votes, or there are no intervals."
    )
    ranks_reason = serializers.CharField(allow_null=True, help_text="Why the ranks are not meaningful.")
    ranks_too_few = TooFewSerializer(many=True, help_text="Models below min_decisive decisive votes, fewest first.")
    min_decisive = serializers.IntegerField(help_text="Decisive votes a model needs for its rank to mean anything.")
    votes_to_separate = SeparationSerializer(
        many=True, required=False, help_text="Per pair of neighbours by score (the first: top against second)."
    )
    annotators = AnnotatorReliabilitySerializer(
        many=True, required=False, help_text="With ?annotators=reliability: each annotator's reliability."
    )
    anchor = serializers.JSONField(
        required=False, help_text="With ?annotators=reliability: what the reliabilities are measured against."
    )
    plain_moved = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="With ?annotators=reliability: models the reliabilities move from the plain fit.",
    )
    weights = serializers.CharField(
        required=False, help_text="'none', or 'ipw': votes weighed by 1 / their pair's choice probability."
    )


class CoefficientSerializer(serializers.Serializer):
    r = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)


class CorrelationSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Number of paired points.")
    meaningful = serializers.BooleanField(help_text="False below the minimum number of points: no p-values then.")
    reason = serializers.CharField(allow_null=True, help_text="Why the coefficients are not meaningful.")
    notes = serializers.DictField(child=serializers.CharField(), help_text="Why an interval has zero width.")
    pearson = CoefficientSerializer()
    spearman = CoefficientSerializer()
    kendall = CoefficientSerializer()


class ModelPointSerializer(serializers.Serializer):
    model = serializers.CharField()
    bt = serializers.FloatField()
    judge = serializers.FloatField()


class BTVersusJudgeSerializer(CorrelationSerializer):
    points = ModelPointSerializer(many=True)


class IntentPointSerializer(serializers.Serializer):
    intent = serializers.CharField()
    judge = serializers.FloatField()
    satisfaction = serializers.FloatField()
    respondents = serializers.IntegerField()


class SatisfactionVersusJudgeSerializer(CorrelationSerializer):
    points = IntentPointSerializer(many=True)


class CohenPairSerializer(serializers.Serializer):
    rater_a = serializers.CharField()
    rater_b = serializers.CharField()
    units = serializers.IntegerField()
    agreement = serializers.FloatField()
    kappa = serializers.FloatField(allow_null=True)


class AgainstJudgeSerializer(serializers.Serializer):
    rater = serializers.CharField()
    units = serializers.IntegerField()
    agreement = serializers.FloatField()
    kappa = serializers.FloatField(allow_null=True)


class PositionBiasSerializer(serializers.Serializer):
    first_wins = serializers.IntegerField()
    second_wins = serializers.IntegerField()
    decisive = serializers.IntegerField()
    first_rate = serializers.FloatField(allow_null=True)
    left_wins = serializers.IntegerField()
    right_wins = serializers.IntegerField()
    left_rate = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)


class AgreementReportSerializer(serializers.Serializer):
    units = serializers.IntegerField()
    overlapping_units = serializers.IntegerField()
    raw_agreement = serializers.FloatField(allow_null=True)
    raw_agreement_pairs = serializers.IntegerField()
    raw_agreement_without_ties = serializers.FloatField(allow_null=True)
    raw_agreement_without_ties_pairs = serializers.IntegerField()
    cohen_pairs = CohenPairSerializer(many=True)
    fleiss_kappa = serializers.FloatField(allow_null=True)
    krippendorff_alpha = serializers.FloatField(allow_null=True)
    against_judge = AgainstJudgeSerializer(many=True)
    position_bias = PositionBiasSerializer()
    excluded_annotators = serializers.ListField(child=serializers.CharField())


class AlignmentReportSerializer(serializers.Serializer):
    class Meta:
        ref_name = "AlignmentReport"

    dataset = serializers.CharField()
    run = serializers.IntegerField()
    estimable = serializers.BooleanField(
        default=True, help_text="False when these votes and this run give no alignment figures: the rest is null."
    )
    reason = serializers.CharField(allow_null=True, default=None, help_text="Why not estimable.")
    bt = BTReportSerializer(allow_null=True)
    judge_scores = serializers.DictField(
        child=serializers.FloatField(), allow_null=True, help_text="Mean judge score per model."
    )
    bt_vs_judge = BTVersusJudgeSerializer(allow_null=True)
    satisfaction_vs_judge = SatisfactionVersusJudgeSerializer(allow_null=True)
    agreement = AgreementReportSerializer(allow_null=True)


class AnnotatorQualitySerializer(serializers.Serializer):
    class Meta:
        ref_name = "AnnotatorQuality"

    annotator = serializers.CharField()
    votes = serializers.IntegerField()
    gold = serializers.IntegerField()
    gold_correct = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True)
    flags = serializers.ListField(
        child=serializers.ChoiceField(choices=["gold_accuracy", "too_fast"]),
        help_text="Why the annotator is flagged: gold accuracy below the threshold, or faster than the "
        "campaign's least time per item.",
    )
    flagged = serializers.BooleanField(help_text="True when any flag applies: their votes are left out.")


class StyleScoreSerializer(serializers.Serializer):
    class Meta:
        ref_name = "StyleScore"

    # A declared field, not Field.label: the serializer metaclass takes it out of the class.
    label = serializers.CharField(help_text="Model name (researchers only).")  # type: ignore[assignment]
    score = serializers.FloatField(help_text="Bradley-Terry coefficient with style held fixed (sum to zero).")
    lower = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, lower end.")
    upper = serializers.FloatField(allow_null=True, help_text="Bootstrap interval, upper end.")
    rank = serializers.IntegerField(help_text="Rank by interval overlap; equal ranks cannot be told apart.")
    note = serializers.CharField(allow_null=True, help_text="Why the interval is missing or has zero width.")
    elo = serializers.FloatField(help_text="The score on Arena's Elo scale (400 / ln 10 points per unit).")
    elo_lower = serializers.FloatField(allow_null=True, help_text="The interval's lower end in Elo points.")
    elo_upper = serializers.FloatField(allow_null=True, help_text="The interval's upper end in Elo points.")


class StyleCoefficientSerializer(serializers.Serializer):
    class Meta:
        ref_name = "StyleCoefficient"

    feature = serializers.CharField(help_text="length, headers, list_items or bold.")
    beta = serializers.FloatField(help_text="Log-odds of winning per typical (RMS) normalised difference.")
    se = serializers.FloatField(help_text="Standard error from the observed information.")
    lower = serializers.FloatField(allow_null=True)
    upper = serializers.FloatField(allow_null=True)
    scale = serializers.FloatField(help_text="RMS of (a - b) / (a + b) over the votes: beta / scale is per unit.")
    note = serializers.CharField(allow_null=True)


class StyleBTReportSerializer(serializers.Serializer):
    class Meta:
        ref_name = "StyleBTReport"

    scores = StyleScoreSerializer(many=True)
    coefficients = StyleCoefficientSerializer(many=True)
    dropped_features = serializers.ListField(
        child=serializers.CharField(), help_text="Features that never differ between the two answers."
    )
    disconnected = serializers.ListField(child=serializers.CharField(), help_text="Models the votes do not connect.")
    votes = serializers.IntegerField(help_text="Votes in the fit.")
    l2 = serializers.FloatField(help_text="Penalty on the model scores (a normal prior); none on the style effects.")
    bootstrap_rounds = serializers.IntegerField()
    skipped_rounds = serializers.IntegerField()
    level = serializers.FloatField()
    all_votes = serializers.IntegerField(help_text="Votes that count, before the fit.")
    cannot_determine = serializers.IntegerField(help_text="Votes left out of the fit.")
    without_answers = serializers.IntegerField(help_text="Votes whose two answers are not both stored: not fitted.")
    excluded_annotators = serializers.ListField(child=serializers.CharField())
    features = serializers.ListField(child=serializers.CharField())
    # Figures stored before these existed lack them: the defaults read "estimable, enough votes".
    estimable = serializers.BooleanField(
        default=True,
        help_text="False when the fit is singular or a style feature is nearly collinear with model identity "
        "(variance inflation above 30): no scores then, `reason` says why.",
    )
    too_few = serializers.BooleanField(
        default=False,
        help_text="True below 30 votes per fitted parameter (times the variance inflation): scores are "
        "given but should be read as greyed, `reason` says how many are needed.",
    )
    reason = serializers.CharField(allow_null=True, default=None, help_text="Why not estimable, or why too few.")
    variance_inflation = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        default=dict,
        help_text="Per style feature, its variance inflation factor against model identity (null: infinite).",
    )
    elo_anchor = serializers.CharField(
        allow_null=True, help_text="Model that reads exactly elo_rating on the Elo scale; null: the mean model."
    )
    elo_rating = serializers.FloatField(help_text="Rating of the anchor (or of the mean model).")
    elo_points_per_unit = serializers.FloatField(help_text="Elo points per unit of score: 400 / ln 10.")
