"""What common SPDX licences allow, so a release can warn before redistributing a corpus it may not.

The table covers the licences corpora usually come under (Creative Commons, the open-source family,
public-domain dedications, KOGL — the Korea Open Government Licence — and the KLUE/AI Hub style
"research only" terms). Unknown identifiers are reported as unknown, never assumed permissive.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _


@dataclass(frozen=True)
class LicenseTerms:
    spdx: str
    redistribution: bool
    derivatives: bool
    commercial: bool
    share_alike: bool = False
    attribution: bool = True


_TABLE: tuple[LicenseTerms, ...] = (
    LicenseTerms("CC0-1.0", True, True, True, attribution=False),
    LicenseTerms("PDDL-1.0", True, True, True, attribution=False),
    LicenseTerms("CC-BY-4.0", True, True, True),
    LicenseTerms("CC-BY-3.0", True, True, True),
    LicenseTerms("CC-BY-2.0", True, True, True),
    LicenseTerms("CC-BY-SA-4.0", True, True, True, share_alike=True),
    LicenseTerms("CC-BY-SA-3.0", True, True, True, share_alike=True),
    LicenseTerms("CC-BY-SA-2.0", True, True, True, share_alike=True),
    LicenseTerms("CC-BY-NC-4.0", True, True, False),
    LicenseTerms("CC-BY-NC-3.0", True, True, False),
    LicenseTerms("CC-BY-NC-SA-4.0", True, True, False, share_alike=True),
    LicenseTerms("CC-BY-NC-SA-3.0", True, True, False, share_alike=True),
    LicenseTerms("CC-BY-ND-4.0", True, False, True),
    LicenseTerms("CC-BY-ND-3.0", True, False, True),
    LicenseTerms("CC-BY-NC-ND-4.0", True, False, False),
    LicenseTerms("CC-BY-NC-ND-3.0", True, False, False),
    LicenseTerms("ODC-By-1.0", True, True, True),
    LicenseTerms("ODbL-1.0", True, True, True, share_alike=True),
    LicenseTerms("MIT", True, True, True),
    LicenseTerms("Apache-2.0", True, True, True),
    LicenseTerms("BSD-3-Clause", True, True, True),
    LicenseTerms("BSD-2-Clause", True, True, True),
    LicenseTerms("GPL-3.0-only", True, True, True, share_alike=True),
    LicenseTerms("GPL-3.0-or-later", True, True, True, share_alike=True),
    LicenseTerms("LGPL-3.0-or-later", True, True, True, share_alike=True),
    LicenseTerms("KOGL-Type1", True, True, True),  # 공공누리 제1유형: attribution
    LicenseTerms("KOGL-Type2", True, True, False),  # 제2유형: + non-commercial
    LicenseTerms("KOGL-Type3", True, False, True),  # 제3유형: + no derivatives
    LicenseTerms("KOGL-Type4", True, False, False),  # 제4유형: all three
    #: The holder's own corpus, not redistributed by anyone else's permission: Goldset keeps it in-house.
    LicenseTerms("LicenseRef-Proprietary", False, True, False),
    #: Research-only terms (e.g. AI Hub data): usable here, not redistributable in a release.
    LicenseTerms("LicenseRef-Research-Only", False, True, False),
)
LICENSES: dict[str, LicenseTerms] = {t.spdx.lower(): t for t in _TABLE}


def license_terms(spdx: str) -> LicenseTerms | None:
    return LICENSES.get(spdx.strip().lower())


def normalise_spdx(spdx: str) -> str:
    """The canonical spelling of a known identifier; unknown ones as given (trimmed)."""
    terms = license_terms(spdx)
    return terms.spdx if terms else spdx.strip()


def release_warnings(spdx: str) -> list[str]:
    """Why items under this licence need care in a release, in the reader's language; empty when it allows
    everything."""
    terms = license_terms(spdx)
    if terms is None:
        return [_("%(licence)s is not a licence Goldset knows; check its terms before any release")
                % {"licence": spdx or _("(none)")}]
    warnings = []
    if not terms.redistribution:
        warnings.append(_("%(licence)s does not allow redistribution: keep these items out of public releases")
                        % {"licence": terms.spdx})
    if not terms.derivatives:
        warnings.append(_("%(licence)s does not allow derivatives (ND): annotated or pseudonymized items are "
                          "derivatives, so they cannot be released") % {"licence": terms.spdx})
    if not terms.commercial:
        warnings.append(_("%(licence)s is non-commercial (NC): a release must carry the same restriction")
                        % {"licence": terms.spdx})
    return warnings


def release_notes(spdx: str) -> list[str]:
    """Obligations that do not block a release (attribution, share-alike), in the reader's language."""
    terms = license_terms(spdx)
    if terms is None:
        return []
    notes = []
    if terms.attribution:
        notes.append(_("attribution required"))
    if terms.share_alike:
        notes.append(_("share-alike: release under the same or a compatible licence"))
    return notes
