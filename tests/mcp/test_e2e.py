"""Jig's MCP server end to end, driven by the official MCP Python SDK (PyPI `mcp`).

Each test starts the real `jig mcp` (stdio, or `--http`) on a scratch copy of
tests/fixtures/mcp and talks to it as an MCP client does: list tools, call them, answer an
approval through elicitation, receive progress, cancel, hear `tools/list_changed`. What a call
did is then read back from Jig's audit (the `jig://runs/…` resources, and `jig audit verify`).

Run: JIG_BIN=target/debug/jig python -m unittest tests/mcp/test_e2e.py (scripts/test does).
"""

import asyncio
import getpass
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
JIG = os.environ.get("JIG_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/jig-target")) / "debug/jig"
)
PERSON = getpass.getuser()
CLIENT = types.Implementation(name="jig-e2e", version="1.0.0")


def scratch_project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="jig-mcp-"))
    shutil.copytree(ROOT / "tests/fixtures/mcp", root / "project")
    return root / "project"


def jig(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [JIG, "--project", str(project), *args], capture_output=True, text=True, timeout=60
    )


async def run_record(session: ClientSession, request_id: str) -> dict:
    """The run of `request_id` as Jig's audit recorded it (the `jig://runs/{id}` resource)."""
    result = await session.read_resource(f"jig://runs/{request_id}")
    return json.loads(result.contents[0].text)


class Stdio:
    """`jig mcp` on stdio, as a client session."""

    def __init__(self, project: Path, **session_args):
        self.params = StdioServerParameters(command=JIG, args=["--project", str(project), "mcp"])
        self.session_args = session_args

    async def __aenter__(self) -> ClientSession:
        self._streams = stdio_client(self.params)
        read, write = await self._streams.__aenter__()
        self._session = ClientSession(read, write, client_info=CLIENT, **self.session_args)
        session = await self._session.__aenter__()
        await session.initialize()
        return session

    async def __aexit__(self, *exc):
        # Closed as after success even when the test failed: the failure is reported by the
        # test, and the SDK's task groups do not unwind an exception from a foreign task.
        await self._session.__aexit__(None, None, None)
        await self._streams.__aexit__(None, None, None)



async def pending_approval(project, name: str) -> str:
    """The id of the pending approval of the note `name`, once the store has it."""
    for _ in range(100):
        listed = await asyncio.to_thread(jig, project, "approvals", "list", "--json")
        for approval in json.loads(listed.stdout or "[]"):
            if f'"name": "{name}"' in json.dumps(approval.get("request")):
                return approval["id"]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no pending approval for {name}")

class StdioTests(unittest.IsolatedAsyncioTestCase):
    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)

    async def test_lists_every_callable_tool_with_schemas_and_hints(self):
        async with Stdio(self.project) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        # Named for MCP clients by the policy, the others by id; denied outright: not shown.
        self.assertIn("test_simple_text", tools)
        self.assertIn("fixtures.note_write", tools)
        self.assertIn("file_read", tools)
        self.assertNotIn("fixtures.forbidden_tool", tools)
        self.assertNotIn("git_push", tools, "git.allow_push is off: never callable")
        note = tools["fixtures.note_write"]
        self.assertEqual(note.input_schema["required"], ["name", "text"])
        self.assertEqual(note.output_schema["required"], ["written"])
        self.assertFalse(note.annotations.read_only_hint)
        self.assertTrue(note.annotations.destructive_hint)
        self.assertEqual(note.annotations.title, "Note write")
        read = tools["file_read"]
        self.assertTrue(read.annotations.read_only_hint)
        self.assertFalse(read.annotations.destructive_hint)
        self.assertTrue(tools["curl"].annotations.open_world_hint)

    async def test_a_read_only_call_is_structured_and_audited_with_its_client(self):
        (self.project / "hello.txt").write_text("hello from the workspace\n")
        async with Stdio(self.project) as session:
            result = await session.call_tool("file_read", {"path": "hello.txt"})
            self.assertFalse(result.is_error)
            self.assertEqual(result.structured_content["content"], "hello from the workspace\n")
            self.assertEqual(json.loads(result.content[0].text), result.structured_content)
            run = await run_record(session, result.meta["jig/request_id"])
        self.assertEqual(run["state"], "succeeded")
        self.assertEqual(run["principal"], f"{PERSON} (via jig-e2e)")
        self.assertEqual(run["tool"], "file_read")
        verify = await asyncio.to_thread(jig, self.project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    async def test_a_failed_call_is_a_tool_error_with_its_code(self):
        async with Stdio(self.project) as session:
            escape = await session.call_tool("file_read", {"path": "../../etc/passwd"})
            self.assertTrue(escape.is_error)
            self.assertTrue(escape.content[0].text.startswith("E_POLICY: "), escape.content[0].text)
            invalid = await session.call_tool("fixtures.note_write", {"name": "BAD NAME", "text": "x"})
            self.assertTrue(invalid.is_error)
            self.assertTrue(invalid.content[0].text.startswith("E_VALIDATION_FAIL: "))
            self.assertEqual(invalid.meta["jig/errors"][0]["code"], "E_VALIDATION_FAIL")
            failing = await session.call_tool("test_error_handling", {})
            self.assertTrue(failing.is_error)
            self.assertIn("intentionally returns an error", failing.content[0].text)

    async def test_an_approval_asked_through_elicitation_and_approved_runs_the_call(self):
        asked = []

        async def approve(context, params):
            asked.append(params)
            return types.ElicitResult(action="accept", content={"decision": "approve", "note": " checked the text "})

        async with Stdio(self.project, elicitation_callback=approve) as session:
            result = await session.call_tool(
                "fixtures.note_write", {"name": "first", "text": "approved"}
            )
            self.assertFalse(result.is_error, result.content[0].text)
            run = await run_record(session, result.meta["jig/request_id"])
        self.assertEqual(len(asked), 1)
        # The person sees exactly what will run and why.
        self.assertIn("fixtures.note_write", asked[0].message)
        self.assertIn('"text": "approved"', asked[0].message)
        self.assertIn("Why it needs approval", asked[0].message)
        self.assertEqual(asked[0].requested_schema["properties"]["decision"]["enum"], ["approve", "deny"])
        # A client that fills the form with its defaults refuses.
        self.assertEqual(asked[0].requested_schema["properties"]["decision"]["default"], "deny")
        self.assertEqual((self.project / "notes/first.txt").read_text(), "approved")
        self.assertEqual(run["state"], "succeeded")
        approvals = await asyncio.to_thread(jig, self.project, "approvals", "list", "--all", "--json")
        decided = json.loads(approvals.stdout)
        self.assertEqual([a["state"] for a in decided], ["consumed"])
        self.assertEqual(decided[0]["decided_by"], PERSON)
        self.assertEqual(decided[0]["note"], "checked the text")

    async def test_an_approval_denied_through_elicitation_runs_nothing(self):
        async def deny(context, params):
            return types.ElicitResult(action="decline")

        async with Stdio(self.project, elicitation_callback=deny) as session:
            result = await session.call_tool(
                "fixtures.note_write", {"name": "second", "text": "denied"}
            )
        self.assertTrue(result.is_error)
        self.assertTrue(result.content[0].text.startswith("E_POLICY: "), result.content[0].text)
        self.assertIn("denied", result.content[0].text)
        self.assertFalse((self.project / "notes/second.txt").exists())

        # Denied with a reason: the agent reads it, and the record keeps it.
        async def deny_saying(context, params):
            return types.ElicitResult(action="accept", content={"decision": "deny", "note": "not on a Friday"})

        async with Stdio(self.project, elicitation_callback=deny_saying) as session:
            result = await session.call_tool("fixtures.note_write", {"name": "third", "text": "x"})
        self.assertTrue(result.is_error)
        self.assertIn("not on a Friday", result.content[0].text)
        approvals = await asyncio.to_thread(jig, self.project, "approvals", "list", "--all", "--json")
        notes = [a.get("note") for a in json.loads(approvals.stdout) if a["state"] == "denied"]
        self.assertIn("not on a Friday", notes)

    async def test_without_elicitation_the_call_waits_for_a_person_who_decides_elsewhere(self):
        # The agent's request stays open; a person approves from another process (the CLI here,
        # as from the workbench), and the same request answers with the tool's result.
        async with Stdio(self.project) as session:
            call = asyncio.create_task(
                session.call_tool("fixtures.note_write", {"name": "waited", "text": "approved meanwhile"})
            )
            approval_id = await pending_approval(self.project, "waited")
            self.assertFalse(call.done(), "the call waits for the decision")
            decided = await asyncio.to_thread(
                jig, self.project, "approvals", "approve", approval_id, "--comment", "fine"
            )
            self.assertEqual(decided.returncode, 0, decided.stderr)
            result = await asyncio.wait_for(call, 30)
            self.assertFalse(result.is_error, result.content[0].text)
            self.assertEqual((self.project / "notes/waited.txt").read_text(), "approved meanwhile")
            # Denied elsewhere: the open request answers with the reviewer's reason; nothing ran.
            call = asyncio.create_task(
                session.call_tool("fixtures.note_write", {"name": "refused", "text": "x"})
            )
            approval_id = await pending_approval(self.project, "refused")
            denied = await asyncio.to_thread(
                jig, self.project, "approvals", "deny", approval_id, "--reason", "not this one"
            )
            self.assertEqual(denied.returncode, 0, denied.stderr)
            result = await asyncio.wait_for(call, 30)
            self.assertTrue(result.is_error)
            self.assertIn("not this one", result.content[0].text)
            self.assertFalse((self.project / "notes/refused.txt").exists())

    async def test_without_waiting_the_error_names_the_approval_and_the_retry_runs(self):
        # A project that answers at once: the agent retries.
        manifest = self.project / "jig.yaml"
        manifest.write_text(manifest.read_text().replace("  mcp:\n", "  mcp:\n    wait_for_approval_seconds: 0\n", 1))
        args = {"name": "third", "text": "approved elsewhere"}
        async with Stdio(self.project) as session:
            first = await session.call_tool("fixtures.note_write", args)
            self.assertTrue(first.is_error)
            approval_id = first.meta["jig/errors"][0]["details"]["approval_id"]
            self.assertIn(f"jig approvals approve {approval_id}", first.content[0].text)
            # Asking again before anyone decided waits on the same approval, not a new one.
            again = await session.call_tool("fixtures.note_write", args)
            self.assertEqual(again.meta["jig/errors"][0]["details"]["approval_id"], approval_id)
            self.assertFalse((self.project / "notes/third.txt").exists())
            decided = await asyncio.to_thread(jig, self.project, "approvals", "approve", approval_id)
            self.assertEqual(decided.returncode, 0, decided.stderr)
            retry = await session.call_tool("fixtures.note_write", args)
            self.assertFalse(retry.is_error, retry.content[0].text)
            # The same call again is answered from the record (it does not write twice) ...
            fourth = await session.call_tool("fixtures.note_write", args)
            self.assertFalse(fourth.is_error)
            self.assertTrue(fourth.meta.get("jig/replayed"), fourth.meta)
            # ... and other arguments are another request: the approval does not carry over.
            other = await session.call_tool("fixtures.note_write", {**args, "text": "other"})
            self.assertTrue(other.is_error)
            self.assertNotEqual(other.meta["jig/errors"][0]["details"]["approval_id"], approval_id)
        self.assertEqual((self.project / "notes/third.txt").read_text(), "approved elsewhere")

    async def test_progress_notifications_follow_the_tool(self):
        seen = []

        async def progress(value, total, message):
            seen.append((value, total))

        async with Stdio(self.project) as session:
            result = await session.call_tool(
                "test_tool_with_progress", {}, progress_callback=progress
            )
        self.assertFalse(result.is_error)
        self.assertEqual(seen, [(0, 100), (50, 100), (100, 100)])

    async def test_log_lines_arrive_at_the_level_set(self):
        logs = []

        async def log(params):
            logs.append((params.level, params.data))

        async with Stdio(self.project, logging_callback=log) as session:
            await session.call_tool("test_tool_with_logging", {})
            self.assertEqual(logs, [], "no level set: no log lines")
            await session.set_logging_level("info")
            await session.call_tool("test_tool_with_logging", {})
            await asyncio.sleep(0.2)
            await session.set_logging_level("warning")
            await session.call_tool("test_tool_with_logging", {})
            await asyncio.sleep(0.2)
        self.assertEqual(
            logs,
            [
                ("info", "Tool execution started"),
                ("info", "Tool processing data"),
                ("info", "Tool execution completed"),
            ],
        )

    async def test_cancelling_a_slow_call_stops_it_through_the_engine(self):
        async with Stdio(self.project) as session:
            started = time.monotonic()
            with self.assertRaises(Exception):
                await session.call_tool("fixtures.slow_count", {"seconds": 30}, read_timeout_seconds=1.5)
            self.assertLess(time.monotonic() - started, 10)
            # The run ends cancelled, with its record.
            for _ in range(50):
                recent = json.loads((await session.read_resource("jig://runs/recent")).contents[0].text)
                slow = [run for run in recent if run["tool"] == "fixtures.slow_count"]
                if slow and slow[0]["state"] == "cancelled":
                    break
                await asyncio.sleep(0.1)
            self.assertEqual(slow[0]["state"], "cancelled", slow)
        # And its process is gone.
        ps = subprocess.run(["pgrep", "-f", "fixtures:slow"], capture_output=True, text=True)
        self.assertEqual(ps.stdout.strip(), "", "the tool's process outlived the cancel")

    async def test_editing_a_tool_file_tells_the_client_the_list_changed(self):
        changed = asyncio.Event()

        async def on_message(message):
            if isinstance(message, types.ToolListChangedNotification):
                changed.set()

        async with Stdio(self.project, message_handler=on_message) as session:
            before = {tool.name for tool in (await session.list_tools()).tools}
            self.assertNotIn("fixtures.echo_again", before)
            source = (self.project / "tools/test_simple_text.tool.yaml").read_text()
            (self.project / "tools/echo_again.tool.yaml").write_text(
                source.replace("fixtures.test_simple_text", "fixtures.echo_again")
            )
            await asyncio.wait_for(changed.wait(), timeout=15)
            after = {tool.name for tool in (await session.list_tools()).tools}
        self.assertIn("fixtures.echo_again", after)

    async def test_runbooks_are_prompts_and_runs_are_resources(self):
        async with Stdio(self.project) as session:
            prompts = {prompt.name: prompt for prompt in (await session.list_prompts()).prompts}
            self.assertEqual(
                [(a.name, a.required) for a in prompts["test_prompt_with_arguments"].arguments],
                [("arg1", True), ("arg2", True)],
            )
            prompt = await session.get_prompt(
                "test_prompt_with_arguments", {"arg1": "alpha", "arg2": "other"}
            )
            text = prompt.messages[0].content.text
            self.assertIn("jig runbook run test_prompt_with_arguments", text)
            self.assertIn("--input arg1=alpha", text)
            # Issue #26: values were quoted with Rust's {:?} and unknown names not at all, so
            # the prompt told the agent to run `--input who="$(touch …)" --input x; id #="1"`.
            with self.assertRaises(Exception) as refused:
                await session.get_prompt(
                    "test_prompt_with_arguments", {"arg1": "a", "arg2": "b", "x; id #": "1"}
                )
            self.assertIn("has no input", str(refused.exception))
            marker = self.project / "PROMPT-RAN"
            hostile = {"arg1": f'$(touch {marker})', "arg2": "it's `touch " + str(marker) + "`"}
            prompt = await session.get_prompt("test_prompt_with_arguments", hostile)
            line = prompt.messages[0].content.text.split("```sh\n", 1)[1].split("\n```", 1)[0]
            # What a shell makes of the line (with `jig` swapped for printf): every value
            # arrives as one word, unexpanded.
            self.assertTrue(line.startswith("jig "), line)
            words = subprocess.run(
                ["sh", "-c", "printf '%s\\0' " + line[len("jig "):]],
                capture_output=True, text=True, check=True,
            ).stdout.split("\0")[:-1]
            self.assertEqual(words[:3], ["runbook", "run", "test_prompt_with_arguments"])
            self.assertIn(f"arg1=$(touch {marker})", words)
            self.assertIn("arg2=" + hostile["arg2"], words)
            self.assertFalse(marker.exists(), "the prompt's command line ran code")
            completion = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg2", "value": "te"},
            )
            self.assertEqual(completion.completion.values, ["testValue2"])
            templates = (await session.list_resource_templates()).resource_templates
            self.assertEqual(
                [t.uri_template for t in templates],
                ["jig://runs/{request_id}", "test://template/{id}/data"],
            )
            with self.assertRaises(Exception):
                await session.read_resource("jig://runs/no-such-run")


def add_resources(project: Path, entries: str) -> None:
    """More `policy.mcp.resources` entries in the scratch project's manifest."""
    manifest = project / "jig.yaml"
    manifest.write_text(manifest.read_text().replace("    resources:\n", "    resources:\n" + entries, 1))


async def wait_until(condition, what: str, seconds: float = 15):
    for _ in range(int(seconds * 10)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"waited {seconds} s for {what}")


class ResourceTests(unittest.IsolatedAsyncioTestCase):
    """The project's resources (`policy.mcp.resources`): each read is a governed call."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)

    async def test_a_read_is_a_call_through_the_policy_and_into_the_audit(self):
        add_resources(
            self.project,
            '      - { uri: "test://denied", tool: fixtures.forbidden_tool }\n'
            '      - { uri: "notes://{name}", tool: fixtures.note_write, arguments: { text: x } }\n',
        )
        async with Stdio(self.project) as session:
            listed = [r.uri for r in (await session.list_resources()).resources]
            # What the policy denies outright is not shown, as in tools/list.
            self.assertEqual(
                listed,
                ["jig://runs/recent", "test://static-text", "test://static-binary",
                 "test://watched-resource", "test://example-resource"],
            )
            text = await session.read_resource("test://static-text")
            self.assertEqual(text.contents[0].text, "This is the content of the static text resource.")
            self.assertEqual(text.contents[0].mime_type, "text/plain")
            png = await session.read_resource("test://static-binary")
            self.assertEqual(png.contents[0].mime_type, "image/png")
            self.assertTrue(png.contents[0].blob)
            data = await session.read_resource("test://template/42/data")
            self.assertEqual(json.loads(data.contents[0].text)["id"], "42")
            # The template's part is the tool's argument, validated by its schema.
            with self.assertRaises(Exception) as invalid:
                await session.read_resource("test://template/a%22b/data")
            self.assertIn("E_VALIDATION_FAIL", str(invalid.exception))
            with self.assertRaises(Exception) as denied:
                await session.read_resource("test://denied")
            self.assertIn("E_POLICY", str(denied.exception))
            # A tool with side effects never serves a read, whatever the manifest says.
            with self.assertRaises(Exception) as writes:
                await session.read_resource("notes://first")
            self.assertIn("declares side effects", str(writes.exception))
            with self.assertRaises(Exception):
                await session.read_resource("test://nothing-here")
            recent = json.loads((await session.read_resource("jig://runs/recent")).contents[0].text)
        self.assertFalse((self.project / "notes").exists())
        reads = [run for run in recent if run["tool"] == "fixtures.template_data"]
        self.assertEqual(len(reads), 1, recent)
        self.assertEqual(reads[0]["principal"], f"{PERSON} (via jig-e2e)")
        self.assertTrue(any(run["tool"] == "fixtures.forbidden_tool" and run["state"] == "denied" for run in recent), recent)

    async def test_a_subscriber_hears_runs_that_move_here_and_in_other_processes(self):
        updated = []

        async def on_message(message):
            if isinstance(message, types.ResourceUpdatedNotification):
                updated.append(str(message.params.uri))

        (self.project / "hello.txt").write_text("hi")
        async with Stdio(self.project, message_handler=on_message) as session:
            with self.assertRaises(Exception):
                await session.subscribe_resource("test://not-served")
            await session.subscribe_resource("jig://runs/recent")
            # A call from the terminal, another process on the same store.
            called = await asyncio.to_thread(jig, self.project, "call", "file_read", "--args", '{"path":"hello.txt"}')
            self.assertEqual(called.returncode, 0, called.stderr)
            await wait_until(lambda: "jig://runs/recent" in updated, "the terminal's call")
            # One run: a call waiting for approval, denied from the terminal.
            call = asyncio.create_task(
                session.call_tool("fixtures.note_write", {"name": "watched", "text": "x"})
            )
            approval_id = await pending_approval(self.project, "watched")
            listed = await asyncio.to_thread(jig, self.project, "approvals", "list", "--json")
            request_id = next(a for a in json.loads(listed.stdout) if a["id"] == approval_id)["request_id"]
            await session.unsubscribe_resource("jig://runs/recent")
            await session.subscribe_resource(f"jig://runs/{request_id}")
            updated.clear()
            denied = await asyncio.to_thread(jig, self.project, "approvals", "deny", approval_id, "--reason", "no")
            self.assertEqual(denied.returncode, 0, denied.stderr)
            await wait_until(lambda: f"jig://runs/{request_id}" in updated, "the denied run")
            result = await asyncio.wait_for(call, 30)
            self.assertTrue(result.is_error)
            run = await run_record(session, request_id)
            self.assertEqual(run["state"], "denied")
        self.assertNotIn("jig://runs/recent", updated, "unsubscribed")


class AskedTests(unittest.IsolatedAsyncioTestCase):
    """Inputs the agent does not give: the person's (elicitation) and the model's (sampling)."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)

    async def test_what_only_the_person_gives_is_asked_of_them_and_never_taken_from_the_agent(self):
        asked = []

        async def answer(context, params):
            asked.append(params)
            return types.ElicitResult(action="accept", content={"name": "Ada", "age": 36, "score": 1.5, "status": "pending", "verified": False, "extra": "slipped in"})

        async with Stdio(self.project, elicitation_callback=answer) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            # The agent does not see them.
            self.assertEqual(tools["test_elicitation_sep1034_defaults"].input_schema["properties"], {})
            refused = await session.call_tool("test_elicitation_sep1034_defaults", {"name": "agent"})
            self.assertTrue(refused.is_error)
            self.assertIn("given by the person", refused.content[0].text)
            self.assertEqual(asked, [], "nothing asked for a refused call")
            result = await session.call_tool("test_elicitation_sep1034_defaults", {})
            self.assertFalse(result.is_error, result.content[0].text)
            run = await run_record(session, result.meta["jig/request_id"])
            self.assertEqual(run["state"], "succeeded")
        form = asked[0].requested_schema
        self.assertEqual(form["properties"]["status"], {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"})
        self.assertNotIn("x-jig-from", json.dumps(form))
        self.assertIn("please accept with defaults", asked[0].message)
        # The person's answers are the call's arguments (the tool reads them back); what was not
        # asked is dropped.
        given = json.loads(result.content[0].text.split("content=", 1)[1])
        self.assertEqual(given, {"name": "Ada", "age": 36, "score": 1.5, "status": "pending", "verified": False})

    async def test_a_declined_form_runs_nothing_and_a_client_that_cannot_ask_is_told(self):
        async def decline(context, params):
            return types.ElicitResult(action="decline")

        async with Stdio(self.project, elicitation_callback=decline) as session:
            result = await session.call_tool("test_elicitation_sep1330_enums", {})
            self.assertTrue(result.is_error)
            self.assertIn("declined", result.content[0].text)
            recent = json.loads((await session.read_resource("jig://runs/recent")).contents[0].text)
        self.assertFalse([r for r in recent if r["tool"] == "fixtures.test_elicitation_sep1330_enums"])
        async with Stdio(self.project) as session:
            result = await session.call_tool("test_elicitation_sep1330_enums", {})
            self.assertTrue(result.is_error)
            self.assertIn("cannot ask (no elicitation)", result.content[0].text)

    async def test_the_clients_model_writes_what_the_tool_author_asked_for(self):
        prompts = []

        async def sample(context, params):
            prompts.append(params)
            return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="forty-two"), model="e2e")

        async with Stdio(self.project, sampling_callback=sample) as session:
            result = await session.call_tool("test_sampling", {"prompt": "What is six times seven?"})
            self.assertFalse(result.is_error, result.content[0].text)
            self.assertEqual(result.content[0].text, "LLM response: forty-two")
            forged = await session.call_tool("test_sampling", {"prompt": "x", "response": "agent-written"})
            self.assertTrue(forged.is_error)
            self.assertIn("given by the model", forged.content[0].text)
        self.assertEqual(len(prompts), 1)
        self.assertEqual(prompts[0].messages[0].content.text, "What is six times seven?")
        self.assertEqual(prompts[0].max_tokens, 100)
        async with Stdio(self.project) as session:
            result = await session.call_tool("test_sampling", {"prompt": "x"})
            self.assertTrue(result.is_error)
            self.assertIn("no sampling", result.content[0].text)


PLAN_TOOL = """abiVersion: v1
id: plans.count
version: 1.0.0
description: Count a file's lines as a Slurm batch job.
deterministic: true
sideEffects: [exec]
timeoutMs: 120000
limits: {maxInputBytes: 4096, maxOutputBytes: 65536}
inputSchema:
  type: object
  required: [data]
  properties:
    data: {type: string, format: workspace-path}
outputSchema:
  type: object
  required: [exit_code, artifacts]
  properties:
    exit_code: {type: integer}
    job: {type: object}
    artifacts: {type: array}
templating: {engine: jinja2}
execution:
  kind: slurm
  script: |
    sleep 1
    wc -l < "$1" | tr -d ' ' > out/count.txt
  args: ["{{ data }}"]
  io:
    inputs: [{role: data, dest_relpath: in/data.txt}]
    outputs: [{role: count, type: text/plain, srcRelpath: out/count.txt}]
outputs:
  - {role: count, type: text/plain, srcRelpath: out/count.txt}
"""


class PlanTests(unittest.IsolatedAsyncioTestCase):
    """A slurm plan through MCP, on the Slurm cluster scripts/test starts
    (JIG_TEST_SLURM_CONF): the call waits for the job, telling the client each state as
    progress, and answers with the collected result."""

    def setUp(self):
        conf = os.environ["JIG_TEST_SLURM_CONF"]
        self.project = Path(tempfile.mkdtemp(prefix="jig-mcp-plan-")) / "project"
        (self.project / "tools").mkdir(parents=True)
        (self.project / "jig.yaml").write_text(
            "name: mcp-plans\npolicy:\n  rules:\n    - { effects: [exec], action: allow }\n"
            f"  plans:\n    slurm: {{ conf: '{conf}', poll: 200ms }}\n"
        )
        (self.project / "tools/count.tool.yaml").write_text(PLAN_TOOL)
        (self.project / "lines.txt").write_text("a\nb\nc\n")

    async def test_a_slurm_call_reports_its_job_and_answers_with_the_result(self):
        notes = []

        async def progress(value, total, message):
            notes.append(message)

        async with Stdio(self.project) as session:
            result = await session.call_tool(
                "plans.count", {"data": "lines.txt"}, progress_callback=progress
            )
            self.assertFalse(result.is_error, result)
            artifacts = {a["role"]: a for a in result.structured_content["artifacts"]}
            self.assertEqual((self.project / artifacts["count"]["path"]).read_text(), "3\n")
            self.assertTrue(notes[0].startswith("submitted as Slurm job"), notes)
            # Each state the job was seen in, in order (a quick job may skip one between polls).
            states = [n.split(":")[0] for n in notes[1:]]
            self.assertEqual(states[-1], "succeeded", notes)
            self.assertTrue(set(states) <= {"queued", "running", "succeeded"}, notes)
            order = ["queued", "running", "succeeded"]
            self.assertEqual(states, sorted(states, key=order.index), notes)
            # Seed 001: the same call is answered from the collected run, no second job.
            again = await session.call_tool("plans.count", {"data": "lines.txt"})
            self.assertTrue(again.meta["jig/replayed"])
            self.assertEqual(again.structured_content, result.structured_content)


class DescriptorTests(unittest.TestCase):
    """`jig mcp` answers on whatever stdin and stdout it is given: pipes (every other test), a
    socket as Node's child processes get, and stdout shared with stderr (`2>&1`), where it keeps
    tokio's blocking writes so a log line never fails on a full pipe."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)
        (self.project / "hello.txt").write_text("read over any descriptor\n")

    def calls(self, server: subprocess.Popen, send, receive) -> None:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fd", "version": "1"}}
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        self.assertEqual(receive(0)["result"]["serverInfo"]["name"], "jig")
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n in range(1, 21):
            call = {"name": "file_read", "arguments": {"path": "hello.txt"}}
            send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call})
            answer = receive(n)
            self.assertEqual(answer["result"]["structuredContent"]["content"], "read over any descriptor\n")

    def test_a_socket_on_stdin_and_stdout(self):
        import socket

        ours, theirs = socket.socketpair()
        server = subprocess.Popen(
            [JIG, "--project", str(self.project), "mcp"], stdin=theirs, stdout=theirs, stderr=subprocess.DEVNULL
        )
        theirs.close()
        lines = ours.makefile("rw", encoding="utf-8", newline="\n")

        def send(message):
            lines.write(json.dumps(message) + "\n")
            lines.flush()

        def receive(_id):
            return json.loads(lines.readline())

        try:
            ours.settimeout(30)
            self.calls(server, send, receive)
        finally:
            lines.close()
            ours.close()
            server.wait(timeout=30)

    def test_stdout_shared_with_stderr(self):
        server = subprocess.Popen(
            [JIG, "--project", str(self.project), "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
            env={**os.environ, "JIG_LOG": "debug"},
        )

        def send(message):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()

        def receive(want):
            # Log lines share the pipe: the answer is the JSON line with the request's id.
            while True:
                line = server.stdout.readline()
                self.assertTrue(line, "stdout ended")
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if message.get("id") == want:
                    return message

        try:
            self.calls(server, send, receive)
        finally:
            server.stdin.close()
            server.wait(timeout=30)


class DurabilityTests(unittest.TestCase):
    """`audit.durability: effects` (the default): a read-only call is answered once committed,
    before its sync. Killing Jig (SIGKILL) right after the answers loses none of them."""

    def test_answered_read_only_calls_survive_kill_9(self):
        project = scratch_project()
        self.addCleanup(shutil.rmtree, project.parent, ignore_errors=True)
        (project / "small.txt").write_text("durable")
        server = subprocess.Popen(
            [JIG, "--project", str(project), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.addCleanup(server.wait)

        def send(message):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()

        send(HttpTests.INIT)
        self.assertEqual(json.loads(server.stdout.readline())["id"], 1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        calls = 200
        for n in range(calls):
            params = {"name": "file_read", "arguments": {"path": "small.txt"}}
            send({"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": params})
        answered = set()
        while len(answered) < calls:
            answer = json.loads(server.stdout.readline())
            self.assertFalse(answer["result"]["isError"], answer)
            answered.add(answer["result"]["_meta"]["jig/request_id"])
        server.kill()  # SIGKILL: no chance to sync or close anything
        server.wait()
        import sqlite3

        db = sqlite3.connect(project / ".jig/audit.db")
        recorded = {
            row[0]
            for row in db.execute("SELECT request_id FROM runs WHERE tool = 'file_read' AND state = 'succeeded'")
        }
        db.close()
        self.assertEqual(recorded & answered, answered, "an answered call's record was lost")
        verify = jig(project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)


class HttpTests(unittest.TestCase):
    """`jig mcp --http`: the SDK's Streamable HTTP client with a token, and what is refused."""

    TOKEN = "e2e-token-dana-0123456789abcdef"
    VIEWER = "e2e-token-vic-0123456789abcdef0"

    def command(self, users: Path) -> list:
        """The server to start, serving MCP with these people's tokens."""
        return [JIG, "--project", str(self.project), "mcp", "--http", "127.0.0.1:0", "--users", str(users)]

    def endpoint(self, printed: str) -> str:
        """The MCP URL, from the first line the server printed."""
        return printed

    def setUp(self):
        self.project = scratch_project()
        users = self.project.parent / "users.yaml"
        users.write_text(
            "users:\n"
            f"  - {{ name: dana, role: runner, token: {self.TOKEN} }}\n"
            f"  - {{ name: vic, role: viewer, token: {self.VIEWER} }}\n"
        )
        self.server = subprocess.Popen(
            self.command(users), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)
        self.addCleanup(self.server.wait)
        self.addCleanup(self.server.terminate)
        self.url = self.endpoint(self.server.stdout.readline().strip())
        self.host = self.url.split("/")[2]

    def post(self, body, **headers):
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        request = urllib.request.Request(
            self.url, data=json.dumps(body).encode(), headers={**base, **headers}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, dict(answer.headers), answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode()

    INIT = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-http", "version": "1"},
        },
    }

    def test_refusals(self):
        bearer = {"Authorization": f"Bearer {self.TOKEN}"}
        self.assertEqual(self.post(self.INIT)[0], 401, "no token")
        self.assertEqual(self.post(self.INIT, Authorization="Bearer wrong-token")[0], 401)
        self.assertEqual(self.post(self.INIT, Origin="http://evil.example", **bearer)[0], 403)
        self.assertEqual(self.post(self.INIT, Host="evil.example:80", **bearer)[0], 403)
        status, headers, _ = self.post(self.INIT, **bearer)
        self.assertEqual(status, 200)
        session = headers.get("mcp-session-id") or headers.get("Mcp-Session-Id")
        self.assertTrue(session)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        ok = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25", **bearer}
        self.assertEqual(self.post(listing, **ok)[0], 200)
        wrong_version = {**ok, "MCP-Protocol-Version": "1999-01-01"}
        self.assertEqual(self.post(listing, **wrong_version)[0], 400)
        unknown = {**ok, "Mcp-Session-Id": "no-such-session"}
        self.assertEqual(self.post(listing, **unknown)[0], 404)
        # Issue #26: a session belongs to the token that opened it. vic's token with dana's
        # session id ran tools/call inside dana's session (her budget, her approvals).
        hijack = {**ok, "Authorization": f"Bearer {self.VIEWER}"}
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "file_read", "arguments": {"path": "jig.yaml"}}}
        status, _, body = self.post(call, **hijack)
        self.assertEqual(status, 403, body)
        self.assertIn("another token", body)
        self.assertEqual(self.post(listing, **hijack)[0], 403)
        # dana's own session still works.
        self.assertEqual(self.post(listing, **ok)[0], 200)

    def test_the_token_holder_is_the_person_behind_the_client(self):
        async def scenario():
            import httpx2 as httpx

            async def call(token, tool, args):
                client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
                async with client, streamable_http_client(self.url, http_client=client) as streams:
                    read, write = streams[0], streams[1]
                    async with ClientSession(read, write, client_info=CLIENT) as session:
                        await session.initialize()
                        result = await session.call_tool(tool, args)
                        run = None
                        if "jig/request_id" in (result.meta or {}):
                            run = await run_record(session, result.meta["jig/request_id"])
                        return result, run

            (self.project / "hello.txt").write_text("hi")
            result, run = await call(self.TOKEN, "file_read", {"path": "hello.txt"})
            self.assertFalse(result.is_error)
            self.assertEqual(run["principal"], "dana (via jig-e2e)")
            viewer, _ = await call(self.VIEWER, "file_read", {"path": "hello.txt"})
            self.assertTrue(viewer.is_error)
            self.assertIn("not run tools", viewer.content[0].text)

        anyio.run(scenario)


    def test_a_call_longer_than_the_stream_hold_is_read_by_reconnecting(self):
        # The project closes a call's event stream after 1 s (policy.mcp.stream_hold); the SDK
        # reconnects with Last-Event-ID and reads the answer there.
        async def scenario():
            import httpx2 as httpx

            client = httpx.AsyncClient(headers={"Authorization": f"Bearer {self.TOKEN}"}, timeout=30)
            async with client, streamable_http_client(self.url, http_client=client) as streams:
                async with ClientSession(streams[0], streams[1], client_info=CLIENT) as session:
                    await session.initialize()
                    started = time.monotonic()
                    result = await session.call_tool("test_reconnection", {"seconds": 3})
                    took = time.monotonic() - started
                    self.assertFalse(result.is_error, result.content[0].text)
                    self.assertEqual(result.content[0].text, "Reconnection test completed successfully")
                    self.assertGreater(took, 3)
                    self.assertLess(took, 10)

        anyio.run(scenario)

    def test_a_cut_stream_is_resumed_only_by_its_sessions_token(self):
        bearer = {"Authorization": f"Bearer {self.TOKEN}"}
        status, headers, _ = self.post(self.INIT, **bearer)
        session = headers.get("mcp-session-id") or headers.get("Mcp-Session-Id")
        ok = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25", **bearer}
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, **ok)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "test_reconnection", "arguments": {"seconds": 2}}}
        status, _, body = self.post(call, **ok)
        self.assertEqual(status, 200)
        # Cut after the hold: the priming event (an id to resume from), no answer.
        ids = [line[4:] for line in body.splitlines() if line.startswith("id: ")]
        self.assertTrue(ids, body)
        self.assertNotIn('"result"', body)
        resume = {**ok, "Last-Event-ID": ids[-1], "Accept": "text/event-stream"}
        other = {**resume, "Authorization": f"Bearer {self.VIEWER}"}
        for headers, expected in ((other, 403), (resume, 200)):
            request = urllib.request.Request(self.url, headers=headers, method="GET")
            try:
                with urllib.request.urlopen(request, timeout=15) as answer:
                    status, text = answer.status, ""
                    for raw in answer:
                        text += raw.decode()
                        if '"result"' in text:
                            break
            except urllib.error.HTTPError as error:
                status, text = error.code, error.read().decode()
            self.assertEqual(status, expected, text)
        self.assertIn("Reconnection test completed successfully", text)


class ServeMountTests(HttpTests):
    """The same endpoint mounted in `jig serve` at /mcp, behind the workbench's tokens."""

    def command(self, users: Path) -> list:
        return [JIG, "--project", str(self.project), "serve", "--addr", "127.0.0.1:0", "--users", str(users)]

    def endpoint(self, printed: str) -> str:
        return printed.rstrip("/") + "/mcp"


def with_upstream(project: Path) -> None:
    """`project` with two upstream servers: the real npm `server-filesystem`, on the project, and
    a hostile one (tests/fixtures/upstream/hostile.py) that crashes when asked to."""
    modules = Path(os.environ.get("JIG_MCP_NODE_MODULES", Path.home() / ".cache/jig-mcp-node/node_modules"))
    script = modules / "@modelcontextprotocol/server-filesystem/dist/index.js"
    shutil.copy(ROOT / "tests/fixtures/upstream/hostile.py", project / "hostile.py")
    servers = {
        "files": {"command": "node", "args": [str(script), "."],
                  "grants": {"paths": ["."], "programs": [str(modules)]}},
        "evil": {"command": "python3", "args": ["hostile.py"], "grants": {"read": ["hostile.py"]}},
    }
    with open(project / "jig.yaml", "a") as manifest:
        manifest.write(f"mcp_servers: {json.dumps(servers)}\n")
    (project / "hello.txt").write_text("read through the gateway")


async def tool_names(session: ClientSession, wanted: str) -> set:
    """The tools listed once `wanted` is among them (`jig mcp` asks its upstream servers again
    at start without holding the client)."""
    for _ in range(300):
        names = {tool.name for tool in (await session.list_tools()).tools}
        if wanted in names:
            return names
        await asyncio.sleep(0.1)
    raise AssertionError(f"{wanted} never listed")


class UpstreamTests(unittest.IsolatedAsyncioTestCase):
    """Jig in front of upstream MCP servers: an agent on `jig mcp` calls their tools, each call
    through the policy, approvals (by elicitation) and the audit."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)
        with_upstream(self.project)
        # A person asks once for the servers' tools; from then on `jig mcp` asks them again
        # at start by itself.
        found = jig(self.project, "mcp", "discover")
        self.assertEqual(found.returncode, 0, found.stdout + found.stderr)

    async def test_an_agent_reads_writes_with_approval_and_survives_a_crash_upstream(self):
        asked = []

        async def approve(context, params):
            asked.append(params)
            return types.ElicitResult(action="accept", content={"decision": "approve"})

        async with Stdio(self.project, elicitation_callback=approve) as session:
            names = await tool_names(session, "files.read_text_file")
            self.assertIn("files.write_file", names)
            self.assertIn("evil.echo", names)
            self.assertNotIn("evil.../escape", names)
            listed = {t.name: t for t in (await session.list_tools()).tools}
            self.assertTrue(listed["files.read_text_file"].annotations.read_only_hint)

            read = await session.call_tool("files.read_text_file", {"path": "hello.txt"})
            self.assertFalse(read.is_error, read.content[0].text)
            self.assertIn("read through the gateway", json.dumps(read.model_dump(mode="json")))
            self.assertEqual((await run_record(session, read.meta["jig/request_id"]))["state"], "succeeded")
            self.assertEqual(asked, [], "a read asks nobody")

            write = await session.call_tool("files.write_file", {"path": "w.txt", "content": "by the agent"})
            self.assertFalse(write.is_error, write.content[0].text)
            self.assertEqual(len(asked), 1)
            self.assertIn("files.write_file", asked[0].message)
            self.assertEqual((self.project / "w.txt").read_text(), "by the agent")

            crash = await session.call_tool("evil.crash", {})
            self.assertTrue(crash.is_error)
            # Why, in the server's own words (its stderr).
            self.assertIn("exited; it said: hostile: told to crash", crash.content[0].text)
            again = await session.call_tool("evil.echo", {"text": "again"})
            self.assertFalse(again.is_error, again.content[0].text)
            self.assertIn("again", json.dumps(again.model_dump(mode="json")))
            # Dying again at once: the next start waits, and the call says for how long.
            await session.call_tool("evil.crash", {})
            paused = await session.call_tool("evil.echo", {"text": "too soon"})
            self.assertTrue(paused.is_error)
            self.assertIn("keeps stopping", paused.content[0].text)
            await asyncio.sleep(1.2)
            later = await session.call_tool("evil.echo", {"text": "later"})
            self.assertFalse(later.is_error, later.content[0].text)
        verify = await asyncio.to_thread(jig, self.project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)


class OtlpReceiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that decodes what it gets with the protocol's own
    definitions (PyPI `opentelemetry-proto`): every span, by its service."""

    def __init__(self):
        import http.server
        import threading

        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        self.spans = []
        spans = self.spans

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                request = trace_service_pb2.ExportTraceServiceRequest()
                # Metrics come too (`/v1/metrics`); only spans are read here.
                if self.path == "/v1/traces":
                    request.ParseFromString(body)
                for resource in request.resource_spans:
                    service = next(
                        (a.value.string_value for a in resource.resource.attributes
                         if a.key == "service.name"), "")
                    for scope in resource.scope_spans:
                        spans.extend((service, span) for span in scope.spans)
                answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if self.path in ("/v1/traces", "/v1/metrics") else 404)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    async def wait_for(self, name: str):
        for _ in range(200):
            found = [span for _, span in self.spans if span.name == name]
            if found:
                return found[0]
            await asyncio.sleep(0.05)
        raise AssertionError(f"no span {name}: {[s.name for _, s in self.spans]}")


class TraceTests(unittest.IsolatedAsyncioTestCase):
    """An agent with a trace of its own calls through `jig mcp`: its trace goes on through
    Jig's governed call and into the tool's process, as a real OTLP receiver sees it."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)
        self.receiver = OtlpReceiver()
        self.addCleanup(self.receiver.server.shutdown)

    async def test_an_agents_trace_goes_through_the_call_into_the_tools_process(self):
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        # The agent's own spans, kept here: the MCP SDK makes one per request and sends its
        # context in the request's `_meta`.
        mine = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(mine))
        trace.set_tracer_provider(provider)
        tracer = provider.get_tracer("jig-e2e-agent")
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.receiver.endpoint,
            "OTEL_SERVICE_NAME": "jig-mcp-under-test",
        }
        params = StdioServerParameters(
            command=JIG, args=["--project", str(self.project), "mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                await session.initialize()
                with tracer.start_as_current_span("agent task") as task:
                    result = await session.call_tool("fixtures.trace_context", {})
                self.assertFalse(result.is_error, result)
                call = await self.receiver.wait_for("execute_tool fixtures.trace_context")
                process = await self.receiver.wait_for("run fixtures.trace_context")

        trace_id = task.get_span_context().trace_id.to_bytes(16, "big")
        agent_ids = {s.get_span_context().span_id.to_bytes(8, "big")
                     for s in mine.get_finished_spans()}
        # Jig's call is a child of a span of the agent's trace; the process, of Jig's call.
        self.assertEqual(call.trace_id, trace_id)
        self.assertIn(call.parent_span_id, agent_ids)
        self.assertEqual(process.trace_id, trace_id)
        self.assertEqual(process.parent_span_id, call.span_id)
        # The tool's process was handed the context of its own span.
        self.assertEqual(
            result.structured_content["traceparent"],
            f"00-{trace_id.hex()}-{process.span_id.hex()}-01")
        attributes = {a.key: a.value for a in call.attributes}
        self.assertEqual(attributes["gen_ai.tool.name"].string_value, "fixtures.trace_context")
        self.assertEqual(attributes["mcp.method.name"].string_value, "tools/call")
        self.assertTrue(attributes["mcp.session.id"].string_value)
        self.assertEqual(attributes["jig.decision"].string_value, "allow")
        self.assertEqual(attributes["jig.request_id"].string_value, result.meta["jig/request_id"])
        services = {service for service, _ in self.receiver.spans}
        self.assertEqual(services, {"jig-mcp-under-test"})

    async def test_an_upstream_server_gets_the_trace_in_meta(self):
        with_upstream(self.project)
        found = jig(self.project, "mcp", "discover")
        self.assertEqual(found.returncode, 0, found.stdout + found.stderr)
        params = StdioServerParameters(
            command=JIG, args=["--project", str(self.project), "mcp"],
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": self.receiver.endpoint})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT) as session:
                await session.initialize()
                await tool_names(session, "evil.echo")
                result = await session.call_tool("evil.echo", {"text": "traced"})
                self.assertFalse(result.is_error, result)
                call = await self.receiver.wait_for("execute_tool evil.echo")
                run = await self.receiver.wait_for("run evil.echo")
        self.assertEqual(run.trace_id, call.trace_id)
        self.assertEqual(run.parent_span_id, call.span_id)
        # The upstream server was sent the trace, naming the span of its call.
        # (The tool declares no output schema: its answer is the text of the data.)
        self.assertEqual(
            json.loads(result.content[0].text)["traceparent"],
            f"00-{call.trace_id.hex()}-{run.span_id.hex()}-01")


def with_three_servers(project: Path) -> None:
    """`project` with the three real servers of the registries as a user configures them:
    npm `server-filesystem` and `server-everything`, and PyPI `mcp-server-git` on the project
    as a git repository."""
    modules = Path(os.environ.get("JIG_MCP_NODE_MODULES", Path.home() / ".cache/jig-mcp-node/node_modules"))
    python = Path(os.environ.get("JIG_MCP_PYTHON", Path.home() / ".cache/jig-mcp-venv/bin/python"))
    venv = python.parent.parent
    # The venv's interpreter is a link to the one it was made from: both are granted, read-only.
    interpreter = Path(os.path.realpath(python)).parent.parent
    servers = {
        "files": {"command": "node",
                  "args": [str(modules / "@modelcontextprotocol/server-filesystem/dist/index.js"), "."],
                  "grants": {"paths": ["."], "programs": [str(modules)]}},
        "git": {"command": str(venv / "bin/mcp-server-git"), "args": ["--repository", "."],
                "grants": {"paths": ["."], "programs": [str(venv), str(interpreter)]}},
        "everything": {"command": "node",
                       "args": [str(modules / "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
                       "grants": {"programs": [str(modules)]}},
    }
    with open(project / "jig.yaml", "a") as manifest:
        manifest.write(f"mcp_servers: {json.dumps(servers)}\n")
    (project / "hello.txt").write_text("read through the gateway")
    for args in (["init", "-q"], ["add", "hello.txt"], ["commit", "-qm", "first"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       cwd=project, check=True, capture_output=True)


def upstream_pids(project: Path, marker: str) -> list:
    """The processes of the upstream server whose command line names `marker`, started for
    `project` (their working directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if marker in cmdline and Path(cwd) == project.resolve():
            found.append(int(entry.name))
    return found


def staged(project: Path) -> list:
    done = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True,
                          text=True, check=True)
    return done.stdout.split()


class ThreeServersTests(unittest.IsolatedAsyncioTestCase):
    """`jig mcp` in front of the three real servers issue #29 names, from the Python SDK: each
    one's tools listed under the policy, a read answered and audited, a write asking for
    approval by elicitation, and the server killed and working again."""

    def setUp(self):
        self.project = scratch_project()
        self.addCleanup(shutil.rmtree, self.project.parent, ignore_errors=True)
        with_three_servers(self.project)
        found = jig(self.project, "mcp", "discover")
        self.assertEqual(found.returncode, 0, found.stdout + found.stderr)

    async def test_each_server_reads_freely_asks_before_writing_and_comes_back_after_a_kill(self):
        asked = []

        async def approve(context, params):
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"decision": "approve"})

        reads = {
            "files": ("files.read_text_file", {"path": "hello.txt"}, "read through the gateway",
                      "server-filesystem"),
            "git": ("git.git_status", {"repo_path": "."}, "On branch", "mcp-server-git"),
            "everything": ("everything.get-sum", {"a": 2, "b": 3}, "is 5", "server-everything"),
        }
        async with Stdio(self.project, elicitation_callback=approve) as session:
            await tool_names(session, "everything.get-sum")
            await tool_names(session, "git.git_status")
            listed = {t.name: t for t in (await session.list_tools()).tools}
            for name, _, _, _ in reads.values():
                self.assertTrue(listed[name].annotations.read_only_hint, name)
                self.assertIn("properties", listed[name].input_schema, name)
            for name in ("files.write_file", "git.git_add", "everything.toggle-simulated-logging"):
                self.assertFalse(listed[name].annotations.read_only_hint, name)

            async def read(server: str):
                name, args, expected, _ = reads[server]
                answer = await session.call_tool(name, args)
                text = json.dumps(answer.model_dump(mode="json"))
                self.assertFalse(answer.is_error, text)
                self.assertIn(expected, text)
                run = await run_record(session, answer.meta["jig/request_id"])
                self.assertEqual((run["state"], run["tool"]), ("succeeded", name))

            for server in reads:
                await read(server)
            self.assertEqual(asked, [], "a read asks nobody")

            written = await session.call_tool("files.write_file", {"path": "w.txt", "content": "by the agent"})
            self.assertFalse(written.is_error, written.content[0].text)
            self.assertEqual((self.project / "w.txt").read_text(), "by the agent")
            added = await session.call_tool("git.git_add", {"repo_path": ".", "files": ["w.txt"]})
            self.assertFalse(added.is_error, added.content[0].text)
            self.assertEqual(staged(self.project), ["w.txt"])
            toggled = await session.call_tool("everything.toggle-simulated-logging", {})
            self.assertFalse(toggled.is_error, toggled.content[0].text)
            self.assertEqual(len(asked), 3, asked)
            for message, name in zip(asked, ("files.write_file", "git.git_add", "everything.toggle-simulated-logging")):
                self.assertIn(name, message)

            # Each server killed between calls: the next call starts it again and is answered.
            for server, (_, _, _, marker) in reads.items():
                pids = upstream_pids(self.project, marker)
                self.assertTrue(pids, f"{server}: no process of {marker} for the project")
                for pid in pids:
                    os.kill(pid, 9)
                for _ in range(50):
                    if not any(pid in upstream_pids(self.project, marker) for pid in pids):
                        break
                    await asyncio.sleep(0.1)
                await read(server)
                self.assertTrue(set(upstream_pids(self.project, marker)) - set(pids), f"{server} started again")
        verify = await asyncio.to_thread(jig, self.project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)


class InspectorTests(unittest.TestCase):
    """MCP Inspector (npm `@modelcontextprotocol/inspector` v2), in CLI mode, over stdio."""

    def inspector(self, project: Path, *args: str) -> dict:
        modules = Path(os.environ.get("JIG_MCP_NODE_MODULES", Path.home() / ".cache/jig-mcp-node/node_modules"))
        launcher = modules / "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
        command = ["node", str(launcher), "--cli", JIG, "--project", str(project), "mcp", *args]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        return json.loads(done.stdout)

    def test_lists_and_calls_an_upstream_servers_tool_through_jig(self):
        project = scratch_project()
        self.addCleanup(shutil.rmtree, project.parent, ignore_errors=True)
        with_upstream(project)
        found = jig(project, "mcp", "discover")
        self.assertEqual(found.returncode, 0, found.stdout + found.stderr)
        listed = self.inspector(project, "--method", "tools/list")
        self.assertIn("files.read_text_file", [tool["name"] for tool in listed["tools"]])
        called = self.inspector(
            project, "--method", "tools/call", "--tool-name", "files.read_text_file", "--tool-arg", "path=hello.txt"
        )
        self.assertFalse(called["isError"], called)
        self.assertIn("read through the gateway", json.dumps(called))

    def test_lists_and_calls_the_three_real_servers_tools_through_jig(self):
        project = scratch_project()
        self.addCleanup(shutil.rmtree, project.parent, ignore_errors=True)
        with_three_servers(project)
        found = jig(project, "mcp", "discover")
        self.assertEqual(found.returncode, 0, found.stdout + found.stderr)
        listed = {tool["name"]: tool for tool in self.inspector(project, "--method", "tools/list")["tools"]}
        for name in ("files.read_text_file", "git.git_status", "everything.get-sum"):
            self.assertTrue(listed[name]["annotations"]["readOnlyHint"], name)
        for name, args, expected in (
            ("git.git_status", ["repo_path=."], "On branch"),
            ("everything.get-sum", ["a=2", "b=3"], "is 5"),
        ):
            called = self.inspector(
                project, "--method", "tools/call", "--tool-name", name,
                *[part for arg in args for part in ("--tool-arg", arg)],
            )
            self.assertFalse(called["isError"], called)
            self.assertIn(expected, json.dumps(called))
        verify = jig(project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    def test_lists_and_calls_a_jig_tool(self):
        project = scratch_project()
        self.addCleanup(shutil.rmtree, project.parent, ignore_errors=True)
        (project / "hello.txt").write_text("seen by the inspector")
        listed = self.inspector(project, "--method", "tools/list")
        self.assertIn("file_read", [tool["name"] for tool in listed["tools"]])
        called = self.inspector(
            project, "--method", "tools/call", "--tool-name", "file_read", "--tool-arg", "path=hello.txt"
        )
        self.assertFalse(called["isError"])
        self.assertEqual(called["structuredContent"]["content"], "seen by the inspector")
        verify = jig(project, "audit", "verify")
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)


if __name__ == "__main__":
    unittest.main()
