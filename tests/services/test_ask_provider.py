"""The ``ask`` setting of ``fastpad.json``: a malformed one is refused naming its key (so ``fp serve``
does not start on it), and a key variable the server's environment lacks is the typed 503."""

from __future__ import annotations

import pytest

from fastpad.errors import ProviderNotConfigured, ValidationFailed
from fastpad.search.provider import ChatProvider, provider_from_config

GOOD = {"base_url": "http://127.0.0.1:8080/v1", "model": "qwen2.5"}


def test_no_setting_is_no_provider_and_a_good_one_is_read_as_given():
    assert provider_from_config(None) is None
    provider = provider_from_config({**GOOD, "api_key_env": "OPENAI_API_KEY", "timeout_s": 30})
    assert provider == ChatProvider("http://127.0.0.1:8080/v1", "qwen2.5", "OPENAI_API_KEY", 30.0)
    assert provider.endpoint == "http://127.0.0.1:8080/v1/chat/completions"
    assert provider.max_completion_tokens == 1024
    assert provider_from_config({**GOOD, "max_completion_tokens": 200}).max_completion_tokens == 200


@pytest.mark.parametrize(("setting", "field"), [
    ("not an object", "ask"),
    ({**GOOD, "api_key": "sk-live"}, "ask.api_key"),  # the key itself never belongs in the file
    ({**GOOD, "base_url": "ftp://127.0.0.1/v1"}, "ask.base_url"),
    ({**GOOD, "base_url": "http:///v1"}, "ask.base_url"),
    ({"base_url": GOOD["base_url"], "model": " "}, "ask.model"),
    ({**GOOD, "api_key_env": "KEY=sk-live"}, "ask.api_key_env"),
    ({**GOOD, "timeout_s": 0}, "ask.timeout_s"),
    ({**GOOD, "timeout_s": True}, "ask.timeout_s"),
    ({**GOOD, "max_completion_tokens": 0}, "ask.max_completion_tokens"),
    ({**GOOD, "max_completion_tokens": 2.5}, "ask.max_completion_tokens"),
])
def test_a_malformed_setting_is_refused_naming_its_key(setting, field):
    with pytest.raises(ValidationFailed) as refused:
        provider_from_config(setting)
    assert refused.value.field_errors[0].field == field


def test_a_key_variable_missing_from_the_environment_is_provider_not_configured(monkeypatch):
    monkeypatch.delenv("FASTPAD_TEST_UNSET_KEY", raising=False)
    provider = provider_from_config({**GOOD, "api_key_env": "FASTPAD_TEST_UNSET_KEY"})
    with pytest.raises(ProviderNotConfigured) as refused:
        provider.complete([{"role": "user", "content": "hello"}])
    assert "FASTPAD_TEST_UNSET_KEY" in refused.value.detail and refused.value.status == 503
