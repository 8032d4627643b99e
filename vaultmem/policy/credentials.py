"""Credentials named by a keyword, in the words people use: prose and code, English and Chinese.

A token with a provider's shape (`ghp_…`, `sk_live_…`) needs no keyword and is found by the
rules in `secret_rules`; everything here is a *value that a keyword names*:

- prose: a password, passcode, PIN, passphrase, wifi key, door code, 密码, 口令, PIN码 …
  whose value follows within the clause — "my password for the clinic portal is X",
  "the deploy user's ssh password on the server is X", "X's password: Y", "我家wifi密码是X",
  "服务器的root密码我改成了X" — or precedes it ("X is my password");
- tokens, keys and secrets named the same way ("the session token for staging is X");
- code and config: `.env` lines and assignments with a secret-looking name
  (`DB_PASSWORD=…`, `api_key = "…"`), `Authorization:` headers, cookies, and credentials
  inside URLs and connection strings (`postgres://user:pw@host`, `Password=…;`).

The other half is what is *not* a credential: shell parameter expansions and command
substitutions (`${CF_API_TOKEN:?set it}`, `$(cat ~/.token)`), references to variables and
calls (`os.environ["API_KEY"]`, `getpass()`), placeholders (`YOUR_API_KEY`, `<token>`, `xxx`,
`****`, `changeme`), type annotations, and plain words ("the password is on the sticky note").

Each detector yields `(kind, start, end)` spans of the value alone; `credentials` runs them all.
They are kept by kind of rule: `credential_values` (what a value must and must not be),
`credential_prose` (a keyword in words), `credential_code` (code and config),
`credential_access` (access codes, security answers, identifiers) and `credential_shapes`
(secrets known by their shape, and values in a message about a credential).
"""

from __future__ import annotations

import re
from typing import Iterator

from vaultmem.policy.credential_access import access_codes, identifiers, security_answers
from vaultmem.policy.credential_code import code
from vaultmem.policy.credential_prose import near_keyword, prose
from vaultmem.policy.credential_shapes import credential_message, phrases_and_codes
from vaultmem.policy.credential_values import Span


def credentials(text: str) -> Iterator[Span]:
    """Every keyword-named credential value in `text` (spans may overlap; the caller picks)."""
    masked = [m.span() for m in re.finditer(r"\$\{[^}\n]*\}|\$\([^)\n]*\)|`[^`\n]*\$[^`\n]*`", text)]
    for kind, start, end in (*code(text), *prose(text), *near_keyword(text), *access_codes(text),
                             *security_answers(text), *identifiers(text), *phrases_and_codes(text),
                             *credential_message(text)):
        if start < end and not any(s < end and start < e for s, e in masked):
            yield kind, start, end
