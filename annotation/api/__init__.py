"""The REST API (``/api/``): thin views over services and selectors."""
