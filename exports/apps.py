from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    verbose_name = "Releases"
    #: The tabs this app adds to every project page (``annotation.tabs``).
    project_tabs = "exports.tabs.PROJECT_TABS"
    #: The links this app adds to an item's page (``annotation.tabs.item_links``): its provenance.
    item_links = "exports.tabs.ITEM_LINKS"
    #: Refuses deleting an item a published release may hold (``annotation.services.item_delete``).
    item_delete_guard = "exports.selectors.item_release_refusal"
