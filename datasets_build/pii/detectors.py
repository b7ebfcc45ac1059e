"""Korean PII detectors: regular expressions plus the checks that make them precise.

Each detector yields :class:`Finding` objects (type, [start, end) in code points, the raw value). The raw
value lives only in memory: callers store the type, the offsets and a salted hash, never the value.
Overlaps are settled by :func:`detect` (higher-priority types win, then longer spans).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

#: Every PII type, in priority order (earlier types win an overlap).
PII_TYPES: tuple[str, ...] = (
    "rrn", "frn", "card", "email", "url", "phone", "account", "passport", "driver_license", "vehicle_plate", "ip",
    "address", "person",
)
#: Identifiers are pseudonymized by default; person names are only detected and flagged.
DEFAULT_POLICY: dict[str, str] = {t: "pseudonymize" for t in PII_TYPES} | {"person": "detect"}
#: Korean labels used in typed placeholders (``[전화번호1]``), matching the guideline templates.
LABELS_KO: dict[str, str] = {
    "rrn": "주민등록번호", "frn": "외국인등록번호", "phone": "전화번호", "email": "이메일", "url": "URL",
    "card": "카드번호", "account": "계좌번호", "passport": "여권번호", "driver_license": "운전면허번호",
    "vehicle_plate": "차량번호", "ip": "IP주소", "address": "주소", "person": "이름",
}


class Finding(NamedTuple):
    type: str
    start: int
    end: int
    value: str


_NO_DIGIT_AFTER = r"(?![\d])"
_SEP = r"[-.\s]?"

# Speed (the text is scanned by a dozen patterns): a pattern that starts with a character or a character
# class lets the regex engine skip in C to where that character occurs; one that starts with a lookbehind
# is tried at every position. So the "nothing before" checks of the scanned patterns come after their
# first character, as a lookbehind one character wider (``\d(?<!\d\d)`` matches where ``(?<!\d)\d``
# does), and the patterns whose matches hold a rarer character (``@``, ``://``, a dot between digits …) are
# matched only near it, through :func:`_matches_at`. tests/datasets_build/pii/test_pii_patterns.py checks that both find
# exactly what the plain patterns scanned over the whole text find.


def _matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[int]) -> Iterator[re.Match[str]]:
    """What ``pattern.finditer(text)`` yields when every match starts at one of ``starts``: the pattern is
    matched only there (in order, skipping starts inside the previous match)."""
    pos = 0
    for start in sorted(set(starts)) if starts else ():
        if start >= pos and (m := pattern.match(text, start)) is not None:
            yield m
            pos = max(m.end(), start + 1)


# -- registration numbers -------------------------------------------------------------------------

_RRN = re.compile(
    r"(\d(?<!\d\d)\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))\s?[-–]?\s?([1-8]\d{6})" + _NO_DIGIT_AFTER
)
_RRN_CONTEXT = re.compile(r"주민(?:등록)?\s?번호|주민번호|외국인\s?등록\s?번호|등록번호|RRN", re.IGNORECASE)
_RRN_WEIGHTS = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)


def _registration_check(digits: str, offset: int) -> bool:
    total = sum(int(d) * w for d, w in zip(digits[:12], _RRN_WEIGHTS, strict=True))
    return (offset - total % 11) % 10 == int(digits[12])


def _registration_numbers(text: str) -> Iterator[Finding]:
    """Resident (7th digit 1-4) and foreigner (5-8) registration numbers.

    A valid checksum is enough; numbers issued since October 2020 carry no checksum, so a well-formed
    number without one counts when a cue such as 주민등록번호 stands within 20 characters before it.
    """
    for m in _RRN.finditer(text):
        digits = m.group(1) + m.group(2)
        foreign = digits[6] in "5678"
        valid = _registration_check(digits, 13 if foreign else 11)
        if not valid and not _RRN_CONTEXT.search(text, max(0, m.start() - 20), m.start()):
            continue
        yield Finding("frn" if foreign else "rrn", m.start(), m.end(), m.group(0))


# -- phones ---------------------------------------------------------------------------------------

_PHONE = re.compile(
    r"(?<![\d])(?:"
    # +82 forms: the trunk 0 is dropped (+82 10-1234-5678, +82-2-123-4567, +82 (0)10 ...)
    + r"\+82[-.\s]?(?:\(0\))?[-.\s]?(?:1[016789]|2|[3-6][1-5]|50\d|70)" + _SEP + r"\d{3,4}" + _SEP + r"\d{4}"
    # mobile, Seoul, other area codes, 050x personal numbers, 070 internet phones
    # a "(" belongs to the number only with its ")" after the area code (02-555-1234 in "박지영(02-555-1234)에게":
    # the parentheses are the sentence's, and the replacement leaves both); "02)555-1234" keeps its ")"
    + r"|(?:\((?:01[016789]|02|0[3-6][1-5]|050\d|070)\)|(?:01[016789]|02|0[3-6][1-5]|050\d|070)\)?)" + _SEP
    + r"\d{3,4}" + _SEP + r"\d{4}"
    + r")" + _NO_DIGIT_AFTER
)
#: A phone starts at +82, or at a 0 that starts a number (or the ``(`` before it).
_PHONE_ANCHORS = (re.compile(r"0(?<!\d0)"), re.compile(r"\+82"))


def _phones(text: str) -> Iterator[Finding]:
    starts = []
    for a in itertools.chain.from_iterable(anchor.finditer(text) for anchor in _PHONE_ANCHORS):
        at = a.start()
        if at and text[at - 1] == "(":
            starts.append(at - 1)
        starts.append(at)
    for m in _matches_at(_PHONE, text, starts):
        digits = re.sub(r"\D", "", m.group(0))
        if len(digits) < 9:
            continue
        yield Finding("phone", m.start(), m.end(), m.group(0))


# -- e-mail and URLs ------------------------------------------------------------------------------

_EMAIL_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'()\[\]가-힣]+", re.IGNORECASE)
#: Every URL holds ``://`` 4 or 5 characters in (http, https) or starts with ``www.``.
_URL_SCHEME = re.compile("://")
_URL_WWW = re.compile(r"\.(?<=[wW]{3}\.)")
#: Path shapes that name a person: ~user, /@handle, /users/x, /profile, blogs and social profiles.
_PERSONAL_PATH = re.compile(
    r"/~[\w.-]+|/@[\w.-]+|/(?:users?|members?|profile|people|u|in)/[\w.%-]+",
    re.IGNORECASE,
)
_PERSONAL_HOSTS = re.compile(
    r"^(?:https?://)?(?:www\.|m\.)?(?:"
    r"(?:blog|cafe)\.naver\.com|instagram\.com|facebook\.com|fb\.com|twitter\.com|x\.com|github\.com|"
    r"youtube\.com/(?:c|channel|user)|tiktok\.com|blog\.daum\.net|velog\.io|brunch\.co\.kr|linkedin\.com/in"
    r")/[\w.%@-]+",
    re.IGNORECASE,
)
_PERSONAL_SUBDOMAIN = re.compile(r"^(?:https?://)?[\w-]+\.(?:tistory\.com|github\.io|blogspot\.com)", re.IGNORECASE)


def _email_starts(text: str) -> Iterator[int]:
    """Where an address can start: the local part is the run of its characters just before an ``@``, and
    it starts where that run does, or right after a ``%`` in it (the only one of them that is not \\w.+-)."""
    at = text.find("@")
    while at != -1:
        start = at
        while start and text[start - 1] in _EMAIL_LOCAL:
            start -= 1
            if text[start] == "%":
                yield start + 1
        yield start
        at = text.find("@", at + 1)


def _emails(text: str) -> Iterator[Finding]:
    if "@" not in text:
        return
    for m in _matches_at(_EMAIL, text, _email_starts(text)):
        yield Finding("email", m.start(), m.end(), m.group(0))


def _urls(text: str) -> Iterator[Finding]:
    """Only URLs whose path or host names a person; a news article's URL is not personal data."""
    if "." not in text and "://" not in text:  # ``in`` scans in C; a URL holds one or the other
        return
    starts = [a.start() - back for a in _URL_SCHEME.finditer(text) for back in (5, 4) if a.start() >= back]
    starts.extend(a.start() - 3 for a in _URL_WWW.finditer(text))
    for m in _matches_at(_URL, text, starts):
        url = m.group(0).rstrip(".,;:!?")
        if _PERSONAL_PATH.search(url) or _PERSONAL_HOSTS.match(url) or _PERSONAL_SUBDOMAIN.match(url):
            yield Finding("url", m.start(), m.start() + len(url), url)


# -- cards, accounts, passports, licences ---------------------------------------------------------

_CARD = re.compile(r"[3-6](?<!\d.)(?:\d{3}(?:[-\s]?\d{4}){2}[-\s]?\d{1,7}|(?<=3)[47]\d{2}[-\s]?\d{6}[-\s]?\d{5}"
                   + _NO_DIGIT_AFTER + ")")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cards(text: str) -> Iterator[Finding]:
    for m in _CARD.finditer(text):
        if m.end() < len(text) and text[m.end()].isdigit():
            continue
        digits = re.sub(r"\D", "", m.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield Finding("card", m.start(), m.end(), m.group(0))


_BANKS = (
    "국민은행|KB국민|신한은행|신한|우리은행|하나은행|KEB하나|농협은행|농협|NH농협|기업은행|IBK기업|IBK|"
    "카카오뱅크|토스뱅크|케이뱅크|SC제일은행|제일은행|씨티은행|한국씨티|새마을금고|우체국|수협|신협|"
    "산업은행|대구은행|부산은행|경남은행|광주은행|전북은행|제주은행|은행"
)
_ACCOUNT = re.compile(
    r"(?:" + _BANKS + r"|계좌(?:번호)?|입금\s?계좌|송금|입금|예금주|통장)[^\d\n]{0,12}?"
    + r"(?<![\d])(\d{2,6}(?:[-\s]\d{2,8}){1,4}|\d{10,14})" + _NO_DIGIT_AFTER
)


def _accounts(text: str) -> Iterator[Finding]:
    """Bank account numbers, only next to a bank name or an account cue (bare digits are too ambiguous)."""
    for m in _ACCOUNT.finditer(text):
        digits = re.sub(r"\D", "", m.group(1))
        if 10 <= len(digits) <= 16:
            yield Finding("account", m.start(1), m.end(1), m.group(1))


_PASSPORT = re.compile(r"[MSRODG](?<![A-Za-z0-9].)(?:\d{8}|\d{3}[A-Z]\d{4})(?![A-Za-z0-9])")


def _passports(text: str) -> Iterator[Finding]:
    """Korean passport numbers: the old ``M12345678`` and the 2021 ``M123A4567`` formats."""
    for m in _PASSPORT.finditer(text):
        yield Finding("passport", m.start(), m.end(), m.group(0))


_REGIONS = "서울|부산|경기|강원|충북|충남|전북|전남|경북|경남|제주|대구|인천|광주|대전|울산|세종"
_LICENSE = re.compile(
    r"(?<![\d가-힣])(?:1[1-9]|2[0-8]|" + _REGIONS + r")[-\s]?\d{2}-\d{6}-\d{2}" + _NO_DIGIT_AFTER
    + r"|(?:운전\s?면허(?:증)?(?:\s?번호)?)[^\d\n]{0,6}(?:1[1-9]|2[0-8]|" + _REGIONS + r")[-\s]?\d{2}[-\s]?\d{6}"
    + r"[-\s]?\d{2}" + _NO_DIGIT_AFTER
)
#: Every match of ``_LICENSE`` starts 4 or 5 characters before ``-`` + six digits (region, separator, two
#: digits) or at 운전; the pattern is tried only there (its own scan of the whole text cost ten times more).
_LICENSE_CORE = re.compile(r"-(?=\d{6}-\d{2})")
_LICENSE_CUE = re.compile("운전")
_LICENSE_NUMBER = re.compile(r"(?:1[1-9]|2[0-8]|" + _REGIONS + r")[-\s]?\d{2}[-\s]?\d{6}[-\s]?\d{2}$")


def _driver_licenses(text: str) -> Iterator[Finding]:
    if "-" not in text and "운전" not in text:
        return
    starts = [m.start() - back for m in _LICENSE_CORE.finditer(text) for back in (5, 4) if m.start() >= back]
    starts.extend(m.start() for m in _LICENSE_CUE.finditer(text))
    for m in _matches_at(_LICENSE, text, starts):
        number = _LICENSE_NUMBER.search(m.group(0))
        if number is not None:
            start = m.start() + number.start()
            yield Finding("driver_license", start, m.end(), text[start:m.end()])


# -- vehicle plates -------------------------------------------------------------------------------

#: The use letters of Korean registration plates (private cars, taxis and buses, rentals, deliveries).
_PLATE_LETTERS = "가나다라마거너더러머버서어저고노도로모보소오조구누두루무부수우주아바사자배하허호"
#: ``12가3456``, ``123가4567`` (since 2019), with an optional region before it (``서울12가3456``, the plates
#: before 2006); a space may separate the parts. Never glued to other digits.
_PLATE = re.compile(
    r"(?:(?:" + _REGIONS + r")\s?)?(?<!\d)\d{2,3}\s?[" + _PLATE_LETTERS + r"]\s?\d{4}(?!\d)"
)


def _vehicle_plates(text: str) -> Iterator[Finding]:
    for m in _PLATE.finditer(text):
        yield Finding("vehicle_plate", m.start(), m.end(), m.group(0))


# -- IP addresses ---------------------------------------------------------------------------------

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(r"(?<![\d.])" + _OCTET + r"(?:\." + _OCTET + r"){3}(?![\d.]*\d)")
#: The first dot of an address, 1-3 characters after its start.
_IPV4_ANCHOR = re.compile(r"\.(?<=\d\.)(?=\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}(?::|[0-9A-Fa-f]{1,4})(?:[0-9A-Fa-f:]*)(?![\w:])")
#: The first colon of an address, 1-4 characters after its start.
_IPV6_ANCHOR = re.compile(r":(?<=[0-9A-Fa-f]:)")


def _ips(text: str) -> Iterator[Finding]:
    if "." in text:
        starts = [a.start() - back for a in _IPV4_ANCHOR.finditer(text) for back in (3, 2, 1) if a.start() >= back]
        for m in _matches_at(_IPV4, text, starts):
            yield Finding("ip", m.start(), m.end(), m.group(0))
    if ":" not in text:
        return
    starts = [a.start() - back for a in _IPV6_ANCHOR.finditer(text) for back in (4, 3, 2, 1) if a.start() >= back]
    for m in _matches_at(_IPV6, text, starts):
        if m.group(0).count(":") >= 3:
            yield Finding("ip", m.start(), m.end(), m.group(0))


# -- postal addresses -----------------------------------------------------------------------------

_PROVINCE = (
    r"(?:서울(?:특별)?시?|부산(?:광역)?시?|대구(?:광역)?시?|인천(?:광역)?시?|광주(?:광역)?시?|대전(?:광역)?시?|"
    r"울산(?:광역)?시?|세종(?:특별자치)?시?|경기도?|강원(?:특별자치)?도?|충청[남북]도|충[남북]|전라[남북]도|"
    r"전북(?:특별자치도)?|전남|경상[남북]도|경[남북]|제주(?:특별자치)?도?)"
)
_DISTRICT = r"[가-힣]{1,5}(?:시|군|구)"
_TOWN = r"[가-힣]{1,5}(?:읍|면)"
_ADMIN = r"(?:(?:" + _PROVINCE + r"|" + _DISTRICT + r"|" + _TOWN + r")\s)"
#: What may follow a building or lot number: the end, punctuation, a particle, or building detail.
_ADDRESS_END = r"(?=$|[\s,.)\]」』]|에서|에|의|으?로|까지|부터|이|은|는|을|를|와|과|번지)"
_ROAD = re.compile(
    _ADMIN + r"{1,3}(?:[가-힣0-9]{1,10}(?:대로|로|길)\s?(?:\d{1,4}(?:번)?[가-하]?길\s?)?)"
    + r"\d{1,5}(?:-\d{1,4})?" + _ADDRESS_END
    + r"(?:\s?\(?[가-힣0-9]{0,12}(?:아파트|빌라|오피스텔|빌딩|타워|센터|맨션|주택)\)?)?"
    + r"(?:\s?\d{1,4}동)?(?:\s?\d{1,5}호)?"
)
_LOT = re.compile(
    _ADMIN + r"{1,3}[가-힣0-9]{1,8}(?:동|리|가)\s?(?:산\s?)?\d{1,5}(?:-\d{1,5})?(?:번지)?" + _ADDRESS_END
    + r"(?:\s?\d{1,4}동)?(?:\s?\d{1,5}호)?"
)
_ADDRESS_CUE = re.compile(r"(?:주소|거주지|사는\s?곳|배송지)\s?[:은는]?\s?")
_ROAD_AFTER_CUE = re.compile(
    r"[가-힣0-9]{1,10}(?:대로|로|길)\s?(?:\d{1,4}(?:번)?[가-하]?길\s?)?\d{1,5}(?:-\d{1,4})?" + _ADDRESS_END
)


#: Every road address holds a road name followed by a number, every lot address 동/리/가 before one; a
#: match starts at most ``_ADDRESS_REACH`` characters before that anchor (3 areas of ≤ 8, a name of ≤ 10).
_ROAD_ANCHOR = re.compile(r"[로길]\s?\d")
_LOT_ANCHOR = re.compile(r"[동리가]\s?(?:산\s?)?\d")
_ADDRESS_REACH = 40


def _anchored(pattern: re.Pattern[str], anchor: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer(text)`` yields, trying only the starts near an anchor: scanning every
    position with the address patterns cost more than all other detectors together."""
    pos = 0
    while (hit := anchor.search(text, pos)) is not None:
        for start in range(max(pos, hit.start() - _ADDRESS_REACH), hit.start() + 1):
            m = pattern.match(text, start)
            if m is not None:
                yield m
                pos = max(m.end(), start + 1)
                break
        else:
            pos = hit.start() + 1


def _addresses(text: str) -> Iterator[Finding]:
    """Road-name and lot-number addresses down to the building or lot number (and unit, when present).

    An administrative area (시·도, 시·군·구, 읍·면) must precede the road or neighbourhood, except right
    after a cue such as 주소: — a bare "대학로 10" is as often a phrase as an address.
    """
    for pattern, anchor in ((_ROAD, _ROAD_ANCHOR), (_LOT, _LOT_ANCHOR)):
        for m in _anchored(pattern, anchor, text):
            value = m.group(0).rstrip()
            yield Finding("address", m.start(), m.start() + len(value), value)
    for cue in _ADDRESS_CUE.finditer(text):
        m = _ROAD_AFTER_CUE.match(text, cue.end())
        if m:
            yield Finding("address", m.start(), m.end(), m.group(0))


# -- person names ---------------------------------------------------------------------------------

#: Common Korean surnames (covering the large majority of the population), two-syllable ones first.
SURNAMES: tuple[str, ...] = (
    "남궁", "황보", "제갈", "선우", "독고", "사공", "서문", "동방",
    "김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권", "황", "안", "송",
    "류", "유", "전", "홍", "고", "문", "양", "손", "배", "백", "허", "남", "심", "노", "하", "곽", "성", "차",
    "주", "우", "구", "민", "진", "나", "지", "엄", "채", "원", "천", "방", "공", "현", "함", "변", "염", "여",
    "추", "도", "소", "석", "선", "설", "마", "길", "연", "위", "표", "명", "기", "반", "왕", "금", "옥", "육",
    "인", "맹", "제", "모", "탁", "국", "어", "은", "편", "용", "예", "경", "봉", "사", "부", "황", "가", "복",
    "태", "목", "형", "피", "두", "감", "음", "빈", "동", "온", "호", "범", "좌", "팽", "승", "간", "상", "갈",
    "시", "견", "당", "화", "창", "옹", "순", "단", "방", "라", "뇌",
)
#: Cues after a name (honorifics, titles, roles); the name precedes them, with or without a space.
_TITLES = (
    "씨", "님", "군", "양", "기자", "특파원", "앵커", "대표", "대표이사", "회장", "부회장", "사장", "부사장", "전무",
    "상무", "이사", "본부장", "실장", "팀장", "부장", "차장", "과장", "대리", "주임", "사원", "교수", "부교수",
    "박사", "선생님", "선생", "원장", "총장", "학장", "의원", "장관", "차관", "대통령", "총리", "시장", "도지사",
    "군수", "구청장", "위원장", "위원", "감독", "코치", "선수", "변호사", "검사", "판사", "의사", "간호사", "작가",
    "시인", "씨의", "할머니", "할아버지", "어머니", "아버지", "학생", "환자", "고객님", "회원님", "목사", "신부",
    "스님", "경위", "경사", "순경", "경감", "경정", "총경", "소장", "중령", "대령", "병장", "상병", "일병",
)
_TITLE_ALT = "|".join(sorted(_TITLES, key=len, reverse=True))
_SURNAME_ALT = "|".join(sorted(set(SURNAMES), key=len, reverse=True))
_HONORIFICS = "씨|님|군|양"
#: Before a title or honorific a name is a full name: surname + two syllables. Surname + one syllable
#: is far more often a common word there (마음씨, 예수님, 태평양, 이중 학생) than a two-syllable name.
_TWO_SYLLABLE_SURNAMES = sorted(s for s in set(SURNAMES) if len(s) == 2)
#: A surname as its first syllable (any surname's), then the second of a two-syllable surname if there is
#: one, tried first as in ``남궁|…|남`` (a literal first, which fails fast); 독 only ever starts 독고.
_SURNAME_START = (
    "[" + "".join(sorted({s[0] for s in SURNAMES})) + r"](?<![가-힣].)(?:"
    + "|".join(f"{s[1]}(?<={s})" for s in _TWO_SYLLABLE_SURNAMES)
    + "|" + "".join(f"(?<!{s[0]})" for s in _TWO_SYLLABLE_SURNAMES if s[0] not in SURNAMES) + ")"
)
_PERSON_BEFORE_TITLE = re.compile(
    r"(" + _SURNAME_START + r"[가-힣]{2})(?:\s?(?:" + _HONORIFICS + r")(?![가-힣]{2})|\s(?:"
    + _TITLE_ALT + r"))"
)
#: A last syllable that makes "surname + syllables" an organisation (정의당, 교육청, 국방부) rather than a name.
_ORG_ENDINGS = frozenset("당청처회팀실단협련사부과국")
_PERSON_AFTER_CUE = re.compile(
    r"(?:성명|이름|작성자|예약자|수령인|수취인|예금주|보호자|신청인|담당자|고객명)\s?[:은는]?\s?((?:" + _SURNAME_ALT
    + r")[가-힣]{1,2})(?![가-힣])"
)
#: Words that look like surname + syllables but are common nouns (or titles) before a title cue.
_NOT_NAMES_TEXT = """
한국 정부 이번 이날 전국 조사 강원 지난 신규 안전 우리 주민 시민 고객 국민 정치 경제 사회 문화
현대 대한 전문 공동 최고 최근 유명 임시 부대 전체 이상 이후 이전 하지 오늘 전직 현직 신임 전임
후임 공동대 여성 남성 노인 주부 소속 공식 부부 부모 조카 손자 손녀 고모 이모 삼촌 사촌 형님
동생 선배 후배 친구 지인 상대 당사 당시 단장 단독 사장 부장 차장 과장 대리 원장 총장 학장 의원
장관 차관 시장 구청 도지 군수 위원 감독 코치 선수 교수 박사 선생 작가 시인 기자 대표 회장 이사
실장 팀장 본부 변호 검사 판사 의사 간호 환자 학생 주임 사원 모씨 김모 이모씨 박모 최모 정모
강모 조모 윤모 장모 임모 한모 오모 서모 신모 권모 황모 안모 송모 유모 전모 홍모 고모씨 문모
양모 손모 배모 백모 허모 남모 심모 노모 하모 곽모 성모 차모 주모 우모 구모 민모 진모 나모 지모
엄모 채모 원모 천모 방모 공모 현모 함모 변모 염모 여모 추모 도모 소모 석모 선모 설모 마모 길모
연모 위모 표모 명모 기모 반모 왕모 금모 옥모 육모 인모 정당 정권 정책 국회 국가 국정 공사 공단
공장 공원 공항 경찰 경기 경선 경영 경주 경남 경북 전남 전북 충남 충북 제주 서울 부산 인천 광주
대전 울산 세종 대구 강남 강북 강서 강동 서초 성남 수원 용인 고양 안산 안양 남양 화성 주식 주요
주최 주관 주한 주미 주중 주일 조합 조직 조선 신한 신세계 하나 우리은 기아 현대차 한화 한진 금호
동원 동부 서부 남부 북부 중부 전체 전원 전부 시청 도청 구청장 시의 도의 구의 군의 가족 가수
가정 기업 기관 기존 기획 명예 상임 상무 사무 사업 사외 설립 성공 소비 손님 송년 신입 심사 안내
양측 여당 야당 연합 예비 오랜 원로 유가 이들 이와 임원 장기 장남 장녀 정식 제작 조기 주민센
지역 진보 차기 채용 초대 최초 최종 최대 추가 출신 탁월 통합 평사 표준 하부 한편 해당 현지 현장
호남 홍보 황금 노조 노동 노사 방송 배우 백화 부총 부회 구단 국립 국제 국내
"""
_NOT_NAMES: frozenset[str] = frozenset(_NOT_NAMES_TEXT.split())


def _ends_with_and(word: str) -> bool:
    """True when the word is a noun + the particle "and" (와 after a vowel, 과 after a consonant): "석사와 박사"
    is "a master's and a doctor", not a name before a title."""
    if len(word) < 2 or word[-1] not in "와과" or not "가" <= word[-2] <= "힣":
        return False
    vowel_final = (ord(word[-2]) - ord("가")) % 28 == 0
    return word[-1] == ("와" if vowel_final else "과")


def _persons(text: str) -> Iterator[Finding]:
    for pattern in (_PERSON_BEFORE_TITLE, _PERSON_AFTER_CUE):
        for m in pattern.finditer(text):
            name = m.group(1)
            # "X와 박사" reads "X and doctors"; before an honorific (김수와 씨) the word is a name.
            before_title = pattern is _PERSON_BEFORE_TITLE and m.group(0)[len(name):].strip() not in _HONORIFICS
            if name in _NOT_NAMES or name[:2] in _NOT_NAMES or name[-1] == "모" or (
                    len(name) == 3 and (name[-1] in _ORG_ENDINGS or (before_title and _ends_with_and(name)))):
                continue
            yield Finding("person", m.start(1), m.end(1), name)


DETECTORS: dict[str, Callable[[str], Iterator[Finding]]] = {
    "registration": _registration_numbers,
    "phone": _phones,
    "email": _emails,
    "url": _urls,
    "card": _cards,
    "account": _accounts,
    "passport": _passports,
    "driver_license": _driver_licenses,
    "vehicle_plate": _vehicle_plates,
    "ip": _ips,
    "address": _addresses,
    "person": _persons,
}
_PRIORITY = {t: i for i, t in enumerate(PII_TYPES)}

# -- preconditions --------------------------------------------------------------------------------

# Most texts hold no PII, and a meta string such as the guid "bench-000123" cannot hold any, yet running
# the eleven detectors costs a generator and a few scans each. So :func:`detect` first checks, by one search
# in C, what every match of a detector must contain, derived below from its patterns, and skips the
# detectors (or the whole text) that cannot find anything. tests/datasets_build/pii/test_pii_patterns.py checks
# that every finding passes these checks and that detect finds the same without them.

#: The digits (``\d``, as in the patterns) every finding of a number detector holds: a text with fewer skips
#: it. registration: ``\d\d`` + month + day and ``[1-8]\d{6}``, 13; phone: 9 (checked after matching); card:
#: 13 (checked); account: 10 (checked); passport: ``\d{8}`` or ``\d{3}[A-Z]\d{4}``, 7; driver's licence: the
#: number ``_LICENSE_NUMBER`` finds, 2 + 6 + 2 after a region's name. A guid such as ``b-0000123`` has 7:
#: only the passport detector's guard is tried.
_NUMBER_DETECTORS: dict[str, int] = {
    "registration": 13, "phone": 9, "card": 13, "account": 10, "passport": 7, "driver_license": 10,
}
#: At least the fewest of those digits. Used with ``match``: the possessive ``\D*+`` makes it one pass.
_SEVEN_DIGITS = re.compile(r"(?:\D*+\d){7}")
_NOT_DIGITS = re.compile(r"\D+")
#: For each other detector, a pattern found (``search``) in every text it finds something in.
_GUARDS: dict[str, re.Pattern[str]] = {
    # The local part ends at an ``@``.
    "email": re.compile("@"),
    # ``https?://`` or ``www.`` (under IGNORECASE only w and W match w, and ``:/.`` match themselves).
    "url": re.compile(r"://|\.(?<=[wW]{3}\.)"),
    # Its letter, then the first three digits of either form.
    "passport": re.compile(r"[MSRODG]\d{3}"),
    # The use letter between the number's digits.
    "vehicle_plate": re.compile(r"\d\s?[" + _PLATE_LETTERS + r"]\s?\d{4}"),
    # IPv4: an octet's last digit, a dot, the next octet's first digit; IPv6: a hex digit before a colon.
    "ip": re.compile(r"\.(?<=\d\.)\d|:(?<=[0-9A-Fa-f]:)"),
    # Road (also after a cue): 로/길, an optional space, the number; lot: 동/리/가, optional 산, the number.
    "address": re.compile(r"[로길동리가]\s?(?:산\s?)?\d"),
    # Before a title: the name's 3 syllables; after a cue: the cue's last 2 syllables, its optional
    # ``\s?[:은는]?\s?``, the name's first 2 (so a meta label such as 사회 is skipped).
    "person": re.compile(r"[가-힣]{3}|[가-힣]{2}\s?[:은는]?\s?[가-힣]{2}"),
}
#: A text without any of these holds no match of any detector: Hangul (address, person), ``@`` (e-mail),
#: ``:`` (``://``, IPv6), ``www.``, a digit-dot-digit (IPv4) or 7 digits (the number detectors, and
#: account's only cue without Hangul, IBK).
_MAYBE_PII = re.compile(r"[가-힣@:]|\.(?<=[wW]{3}\.)|\.(?<=\d\.)\d|(?:\d\D*+){7}")


#: (detector, the digits its findings hold, a pattern every text it finds something in holds, or None).
_Plan = tuple[tuple[Callable[[str], Iterator[Finding]], int, re.Pattern[str] | None], ...]


def _plan(guards: dict[str, re.Pattern[str]]) -> _Plan:
    """(detector, its digits, its guard) in :data:`DETECTORS` order."""
    assert set(guards) | set(_NUMBER_DETECTORS) == set(DETECTORS)
    return tuple((detector, _NUMBER_DETECTORS.get(name, 0), guards.get(name)) for name, detector in DETECTORS.items())


_PLAN = _plan(_GUARDS)
#: Every other guard's match holds one of these: ``@``, a ``:`` or ``.`` (URL, IP) or Hangul (plate, address,
#: person). A text without any (a guid, a serial number) needs only the number detectors' plan.
_OTHER_CUES = re.compile(r"[@:.가-힣]")
_NUMBERS_PLAN = tuple(step for step, name in zip(_PLAN, DETECTORS, strict=True) if name in _NUMBER_DETECTORS)


def _digit_count(text: str) -> int:
    """How many digits (``\\d``) ``text`` holds; 0 when it holds fewer than 7 (no number detector's finding)."""
    if _SEVEN_DIGITS.match(text) is None:
        return 0
    return len(_NOT_DIGITS.sub("", text))


def detect(text: str, types: set[str] | frozenset[str] | None = None) -> list[Finding]:
    """All PII findings in ``text`` (only ``types`` when given), non-overlapping, in text order."""
    if _MAYBE_PII.search(text) is None:
        return []
    digits = _digit_count(text)
    candidates: list[Finding] = []
    # In DETECTORS order, as without the guards: the sorts below are stable.
    for detector, least, guard in _PLAN if _OTHER_CUES.search(text) is not None else _NUMBERS_PLAN:
        if digits >= least and (guard is None or guard.search(text) is not None):
            candidates.extend(detector(text))
    if not candidates:
        return candidates
    candidates = [f for f in candidates if f.start < f.end and (types is None or f.type in types)]
    if len(candidates) < 2:
        return candidates
    return settled(candidates)


def settled(candidates: list[Finding]) -> list[Finding]:
    """Non-overlapping findings out of candidates, in text order."""
    candidates.sort(key=lambda f: (f.start, f.end))
    taken: list[Finding] = []
    # Only overlapping findings compete, so each run of mutually overlapping candidates is settled on its
    # own (most findings overlap nothing and are simply kept).
    first = 0
    while first < len(candidates):
        last, reach = first + 1, candidates[first].end
        while last < len(candidates) and candidates[last].start < reach:
            reach = max(reach, candidates[last].end)
            last += 1
        if last - first == 1:
            taken.append(candidates[first])
        else:
            taken.extend(_settle(candidates[first:last]))
        first = last
    return taken


def _settle(candidates: list[Finding]) -> list[Finding]:
    """Non-overlapping findings out of overlapping ones, in text order."""
    # Priority first, then the longer span, so "계좌 110-123-456789" is an account, not a phone.
    candidates = sorted(candidates, key=lambda f: (_PRIORITY[f.type], -(f.end - f.start), f.start))
    # ``taken`` never overlaps itself, so kept sorted by start only the two neighbours of a candidate
    # can overlap it.
    starts: list[int] = []
    taken: list[Finding] = []
    for finding in candidates:
        index = bisect.bisect_right(starts, finding.start)
        if index > 0 and taken[index - 1].end > finding.start:
            continue
        if index < len(taken) and taken[index].start < finding.end:
            continue
        starts.insert(index, finding.start)
        taken.insert(index, finding)
    return taken
