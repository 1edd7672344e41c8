"""gunicorn's logger, with the private tokens of old links masked in the access log.

Resume and invitation links carry their token in the query string, which the recommended access
log format leaves out (README, "Deployment"). Links handed out before carried it in the path
(`/study/<slug>/resume/<token>/`, `/invite/<token>/`); they still work, by a redirect to the
query-string form, but the request for the old path would be logged with the token. This logger
writes such a path with `[token]` in its place, in every atom that holds the path.

Use: gunicorn config.wsgi --logger-class config.access_log.TokenMaskingLogger ...
"""

import re

from gunicorn.glogging import Logger

TOKEN_PATHS = re.compile(r"(/study/[^/?\s]+/resume/|/invite/)[^/?\s]+")
MASK = r"\1[token]"


def mask_tokens(text: str) -> str:
    """`text` with the token segment of every old resume or invitation path replaced."""
    return TOKEN_PATHS.sub(MASK, text)


class TokenMaskingLogger(Logger):
    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for name in ("U", "r", "f"):
            if isinstance(atoms.get(name), str):
                atoms[name] = mask_tokens(atoms[name])
        return atoms
