from oauth2_provider.oauth2_validators import OAuth2Validator

#: The provider's users whose email it has not verified.
UNVERIFIED = {"mallory"}


class Validator(OAuth2Validator):
    oidc_claim_scope = {**OAuth2Validator.oidc_claim_scope, "groups": "profile"}

    def get_additional_claims(self, request):
        user = request.user
        return {
            "email": user.email,
            "email_verified": user.username not in UNVERIFIED,
            "preferred_username": user.username,
            "given_name": user.first_name,
            "groups": ["lab-annotators"] if user.username == "alice" else [],
        }
