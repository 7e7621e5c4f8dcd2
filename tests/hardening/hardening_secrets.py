#!/usr/bin/env python3
"""Hardening tests of the real binary: the API key never appears in logs
(CODERAG_LOG=debug), results or error messages; citations never read
outside the workspace (group secrets of hardening.py, which runs it)."""
import json
import os
import shutil
from hardening_util import FakeOpenAI, KEY, check, clean_env, embed_env, index, run
import lsp_client  # on sys.path through hardening_util


# ---------------------------------------------------------------- secrets


def t_secrets(bin_path, fixtures, work):
    ws = os.path.join(work, "ws")
    shutil.copytree(os.path.join(fixtures, "shop"), ws)
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.py"), "w") as f:
        f.write("OUTSIDE_SECRET_CONTENT = 1\n")
    os.symlink(outside, os.path.join(ws, "out"))
    # The model cites files outside the workspace in every way it can.
    answer = ("See {ctx0} and [/etc/passwd:1] and [../outside/secret.py:1] and [out/secret.py:1]"
              " and file:///etc/passwd:1 and `%s/secret.py:1`." % outside)
    fake = FakeOpenAI({"actions": {"chat": [{"content": answer, "times": 100}]}})
    outputs = []
    try:
        env = clean_env(embed_env(fake))
        env.update({"CODERAG_LLM_URL": fake.url, "CODERAG_LLM_MODEL": "fake-chat",
                    "CODERAG_LLM_APIKEYENV": "HARDENING_KEY", "CODERAG_LOG": "debug"})
        r = index(bin_path, ws, os.path.join(work, "ix"), env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 0, "index: %s" % r.stderr[-300:])
        r = run([bin_path, "ask", "--root", ws, "--index-dir", os.path.join(work, "ix"), "--json",
                 "--mode", "llm", "how is the order total computed"], env=env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 0, "ask: %s" % r.stderr[-300:])
        res = json.loads(r.stdout)
        reasons = sorted({x["reason"] for x in res["rejected"]})
        check("OUTSIDE_SECRET_CONTENT" not in r.stdout and "root:x:0" not in r.stdout,
              "outside content in the result")
        check(all(c["path"] and not c["path"].startswith(("/", "..")) and not c["path"].startswith("out/")
                  for c in res["citations"]), "a citation outside the workspace was kept: %s" % res["citations"])
        check(len(res["rejected"]) >= 5, "outside citations rejected: %s" % res["rejected"])
        # endpoint errors that echo the Authorization header back
        fake.control("reset", {"actions": {"chat": [{"status": 401, "echo_auth": True, "times": 10}],
                                           "embeddings": [{"status": 401, "echo_auth": True, "times": 10}]}})
        r = run([bin_path, "ask", "--root", ws, "--index-dir", os.path.join(work, "ix"), "--json",
                 "--mode", "llm", "order total"], env=env)
        outputs += [r.stdout, r.stderr]
        check(r.returncode == 3, "ask with a 401: exit %d" % r.returncode)
        with open(os.path.join(ws, "shop", "new_mod.py"), "w") as f:
            f.write("def brand_new():\n    return 1\n")
        r = index(bin_path, ws, os.path.join(work, "ix"), env)
        outputs += [r.stdout, r.stderr]
        # the language server, with the same errors and then a working endpoint
        s = lsp_client.Server(bin_path, work, args=("--index-dir", os.path.join(work, "ix")),
                            env_extra={k: v for k, v in env.items() if k.startswith("CODERAG_")
                                       or k == "HARDENING_KEY"})
        s.errf.flush()
        try:
            s.initialize(ws)
            s.wait_ready()
            r1 = s.call("coderag/ask", {"question": "order total", "mode": "llm"})
            fake.control("reset", {"actions": {"chat": [{"content": answer, "times": 100}]}})
            r2 = s.call("coderag/ask", {"question": "order total", "mode": "llm"})
            r3 = s.call("coderag/status", {})
            outputs += [json.dumps(x) for x in (r1, r2, r3)]
            outputs += [json.dumps(m) for m in s.server_msgs]
            check("result" in r2, "lsp ask: %r" % r2)
            check("OUTSIDE_SECRET_CONTENT" not in json.dumps(r2), "outside content over LSP")
            s.shutdown_exit()
        finally:
            s.kill()
        outputs.append(s.stderr())
        log = fake.control("log")
        auth_ok = all((q.get("auth") in (None, "Bearer " + KEY)) and KEY not in json.dumps(q.get("rest"))
                      for q in log.get("requests", []))
        check(auth_ok, "the key was sent somewhere else than the Authorization header")
        # what the model was sent is only packed context: no excluded or outside file
        sent = json.dumps([q.get("json") for q in log.get("requests", []) if q.get("json")])
        check("OUTSIDE_SECRET_CONTENT" not in sent, "outside file sent to the LLM")
    finally:
        fake.close()
    leaks = [i for i, o in enumerate(outputs) if KEY in (o or "") or KEY[8:] in (o or "")]
    check(not leaks, "the API key appears in output #%s" % leaks)
    print("  secrets: %d outputs (CLI stdout/stderr at debug, LSP messages and stderr) free of the key;"
          " outside citations rejected as %s" % (len(outputs), reasons))


GROUPS = {"secrets": [t_secrets]}
