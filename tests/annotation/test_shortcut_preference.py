"""The single-key shortcut preference (WCAG 2.1.4): stored per user, handed to the workspace, safe redirect."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import Role


@pytest.mark.django_db
def test_the_preference_is_stored_and_reaches_the_workspace(make_project, make_user, add_member):
    project = make_project("tc", slug="prefs")
    user = add_member(project, make_user("pref-user"), Role.ANNOTATOR)
    services.guideline_acknowledge(user=user, project=project)
    client = Client()
    client.force_login(user)
    url = reverse("annotation:shortcuts-set")
    back = reverse("annotation:annotate", args=[project.pk])
    assert client.post(url, {"single_keys": "off", "next": back})["Location"] == back
    user.refresh_from_db()
    assert user.single_key_shortcuts is False
    page = client.get(back).content.decode()
    config = json.loads(re.search(r'id="workspace-config" type="application/json">(.*?)</script>', page).group(1))
    assert config["single_keys"] is False and 'value="on"' in page
    assert client.post(url, {"single_keys": "maybe"}).status_code == 400
    assert client.post(url, {"single_keys": "on",
                             "next": "https://evil.example/"})["Location"] == reverse("annotation:home")
    user.refresh_from_db()
    assert user.single_key_shortcuts is True
