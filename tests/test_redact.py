"""Secret redaction: each kind is found and replaced; near-misses and ordinary numbers are not."""

import pytest

from vaultmem.policy.redact import Secret, cn_id_ok, contains_secret, find_secrets, luhn_ok, redact

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OPENAI = "sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7jKl0"
PRIVATE_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
               "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
               "QyNTUxOQAAACDbzXTfWZ0ACLHUvBZ4Hv6PB8Rr2hf3W+pIY3b5fB9wZQAAAJgAAAAAAAAA\n"
               "-----END OPENSSH PRIVATE KEY-----")


@pytest.mark.parametrize("text, kind, secret", [
    ("key AKIAIOSFODNN7EXAMPLE in the config", "aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
    ("temporary ASIAY34FZKBOKMUTVV7A creds", "aws-access-key", "ASIAY34FZKBOKMUTVV7A"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    (f"my token is {GITHUB}", "github-token", GITHUB),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "github-token",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"),
    (f"OPENAI_API_KEY={OPENAI}", "openai-key", OPENAI),
    ("old key sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL", "openai-key",
     "sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL"),
    ("use sk-ant-api03-AbCdEf0123456789_ghIJkl-mnopQR ok", "anthropic-key", "sk-ant-api03-AbCdEf0123456789_ghIJkl-mnopQR"),
    ("bot token xoxb-123456789012-abcdefABCDEF", "slack-token", "xoxb-123456789012-abcdefABCDEF"),
    ("maps AIzaSyD-1234567890abcdefghijklmnopqrstu end", "google-api-key", "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U.",
     "jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    (f"here:\n{PRIVATE_KEY}\nthanks", "private-key", PRIVATE_KEY),
    ("api_key=abc123def456", "api-key", "abc123def456"),
    ('{"client_secret": "9f8e7d6c5b4a"}', "secret", "9f8e7d6c5b4a"),
    ("token: 7f3a9c2e1b0d", "token", "7f3a9c2e1b0d"),
    ("Authorization: Bearer abcdef123456", "token", "abcdef123456"),
    ("the API密钥是A1b2C3d4E5", "api-key", "A1b2C3d4E5"),
    ("my password is hunter2", "password", "hunter2"),
    ("My password is swordfish.", "password", "swordfish"),
    ("password: x9", "password", "x9"),   # a bare "x" is a placeholder
    ('wifi passphrase is "correct horse"', "password", "correct horse"),
    ("my PIN is 4821", "password", "4821"),
    ("我的密码是abc123，别告诉别人", "password", "abc123"),
    ("密码：Hunter2", "password", "Hunter2"),
    ("银行卡密码为 880712 记住", "password", "880712"),
    ("card 4111 1111 1111 1111 exp 12/29", "card-number", "4111 1111 1111 1111"),
    ("card 5500-0000-0000-0004", "card-number", "5500-0000-0000-0004"),
    ("amex 3782 822463 10005", "card-number", "3782 822463 10005"),
    ("卡号6222021234567890128", "card-number", "6222021234567890128"),
    ("身份证号11010519491231002X", "cn-id", "11010519491231002X"),
    ("id 440304199003071248.", "cn-id", "440304199003071248"),
    ("call me at 13812345678", "phone", "13812345678"),
    ("手机：+86 138-1234-5678", "phone", "+86 138-1234-5678"),
    ("office +44 20 7946 0958 thanks", "phone", "+44 20 7946 0958"),
    ("cell (415) 555-2671", "phone", "(415) 555-2671"),
    ("SSN 123-45-6789 on file", "ssn", "123-45-6789"),
    ("I live at 221B Baker Street, London", "street-address", "221B Baker Street"),
    ("ship to 1600 Pennsylvania Ave NW", "street-address", "1600 Pennsylvania Ave"),
    ("office is 350 5th Ave, Suite 300 today", "street-address", "350 5th Ave, Suite 300"),
    ("我住在上海市徐汇区漕溪北路88号，欢迎来玩", "street-address", "上海市徐汇区漕溪北路88号"),
    ("地址是北京市朝阳区建国路1号3单元", "street-address", "北京市朝阳区建国路1号3单元"),
])
def test_each_kind_is_found_and_redacted(text, kind, secret):
    (found,) = find_secrets(text)
    assert found.kind == kind
    assert text[found.start:found.end] == secret
    redacted, kinds = redact(text)
    assert kinds == [kind]
    assert secret not in redacted
    assert redacted == text.replace(secret, f"[REDACTED:{kind}]", 1)
    assert contains_secret(text)


@pytest.mark.parametrize("text", [
    "The meeting is on 2026-11-29 at 10:29:41, see D1:3 and D2:14.",
    "Released version 1.2.3 (build 4.15.0-generic) in 2023; pi is 3.14159265.",
    "I ran 5 miles down the road and walked 3 blocks.",
    "card 4111 1111 1111 1112",                 # 16 digits failing Luhn
    "order 4111111111111112",
    "id 110105194912310021",                    # 18 digits with a bad checksum
    "years 2023 2024 2025 2026",                # a list of years is no card, even if Luhn passed
    "epoch 1732876181000 and 1764412181",
    "My password is strong and my token is expired.",
    "The secret: surprise-party-for-mom",
    "the pin is on the map",
    "坐地铁4号线到人民路，1998年毕业，价格12345678元，订单号2023112912345。",
    "我的密码是我的生日",                        # a hint, not a password
    "task-1234567890abcdefghijklmn is a ticket slug",
    "temperature -12.5 and +3 points, room 101",
    "Already redacted: password: [REDACTED:password] and [REDACTED:api-key]",
    # "signing" is no sign-in, and the year of a date is no PIN (a model's adoption memory was refused)
    "The user adopted Comet, signing the adoption papers on April 6, 2026; Comet is officially theirs.",
    "I logged in on 6 April 2026 to check the balance.",
])
def test_near_misses_and_ordinary_text_are_left_alone(text):
    assert find_secrets(text) == []
    assert redact(text) == (text, [])
    assert not contains_secret(text)


def test_several_secrets_in_one_chinese_text_keep_their_order():
    text = "我叫小明，手机号是13812345678，身份证号11010519491231002X，住在上海市徐汇区漕溪北路88号。"
    redacted, kinds = redact(text)
    assert kinds == ["phone", "cn-id", "street-address"]
    assert redacted == ("我叫小明，手机号是[REDACTED:phone]，身份证号[REDACTED:cn-id]，"
                        "住在[REDACTED:street-address]。")


def test_specific_kind_wins_over_generic_assignment():
    text = f"token = {GITHUB}\napi_key: {OPENAI}"
    assert [s.kind for s in find_secrets(text)] == ["github-token", "openai-key"]


def test_redacting_twice_changes_nothing():
    text = "password: hunter2 and AKIAIOSFODNN7EXAMPLE and 4111-1111-1111-1111"
    once, kinds = redact(text)
    assert len(kinds) == 3
    assert redact(once) == (once, [])


def test_secrets_are_sorted_and_do_not_overlap():
    text = f"a {GITHUB} b 13812345678 c {PRIVATE_KEY}"
    secrets = find_secrets(text)
    assert secrets == sorted(secrets, key=lambda s: s.start)
    assert all(a.end <= b.start for a, b in zip(secrets, secrets[1:]))
    assert isinstance(secrets[0], Secret)


def test_checksums():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert cn_id_ok("11010519491231002X") and cn_id_ok("11010519491231002x")
    assert not cn_id_ok("110105194912310021")


def test_truncated_private_key_is_redacted_to_the_end_of_its_body():
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAwJ3kVv1\nabcdEFGH1234+/==\n\nThat was my key."
    redacted, kinds = redact(text)
    assert kinds == ["private-key"]
    assert redacted == "[REDACTED:private-key]\n\nThat was my key."


def test_a_clean_text_is_looked_at_once_and_a_text_with_a_secret_every_time(monkeypatch):
    """Extraction redacts each turn twice (reading the session, writing its note): the second
    look at a clean turn is a lookup; a text with a secret is redacted every time and never
    kept; the memory of clean texts is bounded."""
    from vaultmem.policy import redact as redact_module

    monkeypatch.setattr(redact_module, "_clean", {})
    calls = []
    real = redact_module._find_secrets
    monkeypatch.setattr(redact_module, "_find_secrets", lambda text: calls.append(text) or real(text))
    clean, secret = "We met at the Porto market on Sunday.", "my password is hunter2 for the portal"
    for _ in range(3):
        assert redact(clean) == (clean, [])
        assert redact(secret) == ("my password is [REDACTED:password] for the portal", ["password"])
    assert calls.count(clean) == 1 and calls.count(secret) == 3
    assert secret not in redact_module._clean and clean in redact_module._clean
    monkeypatch.setattr(redact_module, "CLEAN_TEXTS", 3)
    for n in range(10):
        redact(f"turn number {n} is clean")
    assert len(redact_module._clean) <= 3


# Issue 32: access codes said without the word "code", and security-question answers.
@pytest.mark.parametrize("text, secret", [
    ("my sign-in PIN is 4821", "4821"),
    ("I signed in on April 6, 2026 with password 9931", "9931"),
    ("the garage keypad is 4471, just so you know", "4471"),
    ("the gate is 4471# if you get there before me", "4471#"),
    ("door at the office: 8812*", "8812*"),
    ("bike lock is 0729", "0729"),
    ("alarm: 1994 then the off button", "1994"),
    ("the lockbox has 3390 in it", "3390"),
    ("车库门禁是 5521#，记得按井号", "5521#"),
    ("楼下单元门 6690，进来左转", "6690"),
    ("my bank's security question is my first school, it's Hillcrest Elementary", "Hillcrest Elementary"),
    ("for the security question, first pet's name, it's Mr Whiskers", "Mr Whiskers"),
    ("my mother's maiden name is Okafor, if the bank asks", "Okafor"),
    ("密保问题的答案是旺财", "旺财"),
    ("also the after-hours entrance wants a code, 9931, and I keep typing my old one", "9931"),
    ("the garage keypad came set to the default so I changed it to 90817. also a weird smell", "90817"),
    ("储物柜是那种号码锁，我设了4082", "4082"),
    ('the security question is "name of your first pet". the answer is Pickles. is that dumb', "Pickles"),
    ("my insurance member ID for the intake form is XHM-4427-0091, where does that go", "XHM-4427-0091"),
    ("他们要 Mango 的 microchip number 转档案，是 985112004567321 对吧", "985112004567321"),
    ("confirmation code 是 K7QXRM，现在能选座吗", "K7QXRM"),
    ("刚才 patient portal 发的 verification code 318846 又过期了", "318846"),
    ("身份证号110105199203154421，事由：杭州客户调研", "110105199203154421"),
    ("school locker: 22 right, 8 left, 31 right. my kid keeps writing it on his hand", "22 right, 8 left, 31 right"),
    ("my wallet seed phrase is orbit valley crisp tunnel mango abstract fever lottery ribbon shallow velvet ankle",
     "orbit valley crisp tunnel mango abstract fever lottery ribbon shallow velvet ankle"),
    ("send the invoice to iban DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"),
    ("我把地图的 ak 填成 Gh7Pq2Wm9Zx4Lr8Tv3Bn6Yc5 了，还是不显示", "Gh7Pq2Wm9Zx4Lr8Tv3Bn6Yc5"),
    ("i keep mixing up my pins. visa is 2290 and the other one is something else", "2290"),
    # the answer after what it is, past a comma; a setup code; a policy number said half in Chinese
    ("also my bank's security question is the street I grew up on, Whitcombe Lane, I always forget",
     "Whitcombe"),
    ("对了 bank 的 security question 我设的是小学名字，Maple Grove Elementary，有没有更 safe 的做法？", "Maple Grove"),
    ("also IT just texted me a laptop setup code, 771-094. does that go in the MDM prompt", "771-094"),
    ("她的 pet insurance policy 号码 PZ-4471-0098, 要 claim 的话要带什么?", "PZ-4471-0098"),
])
def test_access_codes_and_security_answers_are_redacted(text, secret):
    redacted, kinds = redact(text)
    assert secret not in redacted and kinds, redacted


# A keypad code with a star or hash inside it goes whole: batch 3's tune half had
# "code 5931*7" written as "[REDACTED:password]*7", a digit of the code left in the note.
@pytest.mark.parametrize("text, redacted", [
    ("帮我记一下 lab 的门禁 code 5931*7, 我老是忘", "帮我记一下 lab 的门禁 code [REDACTED:password], 我老是忘"),
    ("the alarm is 4471*9# to arm it", "the alarm is [REDACTED:password] to arm it"),
    ("door code *4471*20 from Monday", "door code [REDACTED:password] from Monday"),
    ("the gate is 4471# if you get there before me", "the gate is [REDACTED:password] if you get there before me"),
    ("my PIN is 4821 *7 days a week", "my PIN is [REDACTED:password] *7 days a week"),
])
def test_a_keypad_code_with_a_star_or_hash_inside_is_redacted_whole(text, redacted):
    assert redact(text)[0] == redacted


@pytest.mark.parametrize("text", [
    "the garage was built in 1994",
    "my locker is 12",
    "the gate opens at 7am",
    "we live at 4471 Elm street",       # a street address is its own rule's, not an access code's
    "I asked what the security question for my bank is",
    "the door is 90 cm wide",
    "my confirmation number is in the email",
    "the booking reference is TODAY",
    "error code 0x80070005 again when I update",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq8YcL2mN0vT5wR7pK3sD9fG1hJ4kL6zX8cV2bN5mQ1 dana@laptop",
    "123456 and qwerty still top the list of most common passwords",
    "I set up security questions today, Mom helped, and then we had lunch at Olive Garden.",
])
def test_numbers_near_doors_and_talk_of_security_questions_are_not_secrets(text):
    redacted, kinds = redact(text)
    assert "password" not in kinds and "secret-answer" not in kinds, (redacted, kinds)
