"""ACL signature test vectors (rocketmq-protocol.md 7.1, computed with Java TreeMap + Mac)."""

from __future__ import annotations

from mqctl.remoting.acl import Credentials, compute_signature, sign, signing_content, verify


def test_vector_simple():
    fields = sign({"topic": "TopicTest"}, b"", Credentials("rocketmq2", "12345678"))
    assert signing_content(fields) == b"rocketmq2TopicTest"
    assert fields["Signature"] == "GeeGoP9mRvDhoVp4PD5omX0prgE="


def test_vector_capitalised_keys_sort_first():
    fields = sign({"consumerGroup": "GID_ORDER", "topic": "TopicOrder", "queueId": "0",
                   "setZeroIfNotFound": "false"}, b"", Credentials("rocketmq2", "12345678"))
    assert signing_content(fields) == b"rocketmq2GID_ORDER0falseTopicOrder"
    assert fields["Signature"] == "lmFbe5GEwbBKARaoqyfWmgYNaBU="


def test_vector_with_token_and_body():
    body = (b'{"clientId":"10.0.0.5@12345#1","consumerGroup":"GID_ORDER","mqSet":[{"brokerName":'
            b'"broker-a","queueId":0,"topic":"TopicOrder"}],"onlyThisBroker":false}')
    fields = sign({}, body, Credentials("rocketmq2", "12345678", "tok"))
    assert fields["SecurityToken"] == "tok"
    assert fields["Signature"] == "sS0zvxetmWvjOdGUldYZBQAY4RQ="
    assert verify(fields, body, "12345678")
    assert not verify(fields, body + b" ", "12345678")  # tampered body
    assert not verify(fields, body, "wrong")


def test_signature_excludes_itself_and_resigning_is_stable():
    c = Credentials("ak", "sk")
    once = sign({"a": "1"}, b"", c)
    assert sign(once, b"", c) == once
    assert compute_signature("sk", b"ak1") == once["Signature"]


def test_credentials_repr_hides_secret():
    c = Credentials("ak", "s3cr3t-value", "t0ken-value")
    assert "s3cr3t" not in repr(c) and "t0ken" not in str(c)
