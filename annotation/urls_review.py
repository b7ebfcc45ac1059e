"""Routes of this app (filled in by its feature work)."""

urlpatterns: list = []
