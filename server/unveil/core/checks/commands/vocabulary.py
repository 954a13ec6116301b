"""The command vocabulary of the parsed-command rules: rule ids and their categories, the origins
that run without the model deciding, the command-word sets (fetchers, sockets, DNS tools, senders,
decoders, verifiers, …; :data:`KNOWN_COMMANDS` decides what an unlabelled block or inline span
counts as shell) and the URL / host / secret-variable patterns the rule modules share."""

from __future__ import annotations

import re

from unveil.core import shell

CHECK_NAME = "commands"


RULE_DOWNLOAD_EXEC = "SUP011"


RULE_REMOTE_PACKAGE = "SUP012"


RULE_SEND_SECRET = "EXF011"


RULE_UPLOAD = "EXF012"


RULE_SUB_NETWORK = "EXF013"


RULE_PERSISTENCE = "PER011"


RULE_SECRET_PATH = "SNP015"


RULE_TRUNCATED = "UNV030"


CATEGORY = {
    RULE_DOWNLOAD_EXEC: "supply-chain",
    RULE_REMOTE_PACKAGE: "supply-chain",
    RULE_SEND_SECRET: "data-exfiltration",
    RULE_UPLOAD: "data-exfiltration",
    RULE_SUB_NETWORK: "data-exfiltration",
    RULE_PERSISTENCE: "persistence",
    RULE_SECRET_PATH: "agent-snooping",
    RULE_TRUNCATED: "internal",
}


COMBO = {"data-exfiltration": "egress", "agent-snooping": "secrets"}


AUTO_ORIGINS = frozenset({"hook", "bang", "config"})
"""Origins whose commands run without the model deciding."""


FETCHERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "http",
        "https",
        "xh",
        "xhs",
        "aria2c",
        "lwp-request",
        "get",
        "lynx",
        "httpie",
        "curlie",
        "wget2",
    }
)


SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})


DNS_TOOLS = frozenset(
    {
        "dig",
        "host",
        "nslookup",
        "drill",
        "ping",
        "ping6",
        "traceroute",
        "tracepath",
        "whois",
        "resolvectl",
        "getent",
        "kdig",
        "delv",
    }
)


SENDERS = (
    FETCHERS
    | SOCKETS
    | frozenset({"scp", "rsync", "sftp", "ftp", "tftp", "mail", "mailx", "sendmail", "gh", "pastebinit", "sshpass"})
)


EXEC_WORDS = frozenset({"eval", "source", "."})


ENV_DUMPS = frozenset({"env", "printenv", "set", "export", "declare", "compgen", "typeset"})


RECON = frozenset({"whoami", "hostname", "id", "groups", "ifconfig", "users", "w", "last", "netstat"})
"""Commands whose output identifies the user or machine (``uname``/``arch`` are left out: release
download URLs use them to pick a platform build)."""


DECODERS = frozenset(
    {"base64", "base32", "xxd", "gunzip", "zcat", "uudecode", "rev", "openssl", "gzip", "bunzip2", "xz", "unxz", "tr"}
)


VERIFIERS = frozenset(
    {
        "sha256sum",
        "sha512sum",
        "sha1sum",
        "shasum",
        "b2sum",
        "md5sum",
        "gpg",
        "gpgv",
        "cosign",
        "minisign",
        "signify",
        "slsa-verifier",
        "openssl",
    }
)


READ_LIKE_SKIP = frozenset(
    {
        "chmod",
        "chown",
        "chgrp",
        "ssh-add",
        "ssh-keygen",
        "ssh",
        "ls",
        "stat",
        "test",
        "[",
        "[[",
        "mkdir",
        "rm",
        "touch",
        "vim",
        "vi",
        "nano",
        "emacs",
        "code",
        "open",
        "export",
        "source",
        ".",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "az",
        "git",
        "gh",
        "gpg",
        "npm",
        "pip",
        "ln",
        "echo",
        "cd",
        "mv",
        "unset",
        "direnv",
        "dotenv",
        "helm",
        "terraform",
        "ssh-copy-id",
        "sftp",
        "file",
        "wc",
        "du",
        "find",
        "realpath",
        "dirname",
        "basename",
        "printf",
        "trash",
        "shred",
        "setfacl",
        "icacls",
        "attrib",
        "sops",
        "age",
        "op",
        "vault",
        "doppler",
        "infisical",
        "pnpm",
        "yarn",
        "cargo",
        "gem",
        "twine",
        "poetry",
        "uv",
        "kubectx",
        "minikube",
        "kind",
        "k3d",
        "eksctl",
        "gsutil",
        "bq",
        "code-insiders",
        "cursor",
        "subl",
        "mate",
        "xdg-open",
        "true",
        "false",
        "exit",
        "return",
        "alias",
    }
)


KNOWN_COMMANDS = frozenset(
    set(
        FETCHERS
        | SOCKETS
        | DNS_TOOLS
        | SENDERS
        | EXEC_WORDS
        | shell.SHELLS
        | set(shell.INTERPRETERS)
        | shell.WRAPPERS
        | DECODERS
        | VERIFIERS
    )
    | {
        "git",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bunx",
        "uvx",
        "pipx",
        "pip",
        "pip3",
        "uv",
        "cat",
        "cp",
        "mv",
        "chmod",
        "crontab",
        "ln",
        "tee",
        "echo",
        "printf",
        "mkdir",
        "rm",
        "cd",
        "ssh",
        "tar",
        "zip",
        "unzip",
        "sed",
        "awk",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "az",
        "systemctl",
        "launchctl",
        "defaults",
        "security",
        "install",
        "dd",
        "make",
        "brew",
        "apt",
        "apt-get",
        "yum",
        "dnf",
        "apk",
        "go",
        "cargo",
        "gem",
        "sudo",
        "export",
        "powershell",
        "pwsh",
        "iex",
        "irm",
        "iwr",
        "schtasks",
        "reg",
        "at",
        "head",
        "tail",
        "less",
        "grep",
        "jq",
        "touch",
        "ls",
        "find",
        "xargs",
        "claude",
        "codex",
        "gemini",
        "deno",
        "bun",
        "./install.sh",
        "sh",
    }
)


URL = re.compile(r"(?i)\b(?:https?|ftp)://[^\s'\"<>`|;)]+")


RAW_IP_URL = re.compile(r"(?i)\b(?:https?|ftp)://\d{1,3}(?:\.\d{1,3}){3}\b")


LOCAL_HOST = re.compile(
    r"(?i)^(?:[a-z]+://)?(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|::1|host\.docker\.internal)(?:[:/]|$)"
)


SHADY_HOST = re.compile(
    r"(?i)\b(?:bit\.ly|tinyurl\.com|t\.co|is\.gd|goo\.gl|pastebin\.com|paste\.ee|hastebin|"
    r"transfer\.sh|ngrok(?:-free)?\.(?:io|app)|trycloudflare\.com|webhook\.site|requestbin|"
    r"pipedream\.net|interact\.sh|oast\.|burpcollaborator|0x0\.st|termbin\.com|ix\.io)"
)


SECRET_VAR = re.compile(
    r"(?i)\$\{?([A-Z_][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|"
    r"COOKIE|SESSION|PAT|PRIVATE)[A-Z0-9_]*)\}?"
)
