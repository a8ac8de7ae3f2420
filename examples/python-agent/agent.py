"""A web agent over plain HTTP, in Python's standard library only.

It reads its configuration from the environment: HARNESS_TASK (what to do), HARNESS_SITE_URL
(the site), OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL (a model with tool calling),
OPENAI_API (`chat`, the default: Chat Completions; `responses`: the Responses API),
HARNESS_SITE_USERNAME / HARNESS_SITE_PASSWORD (optional: the agent signs in itself when a page asks
it to) and HARNESS_CLAIM_FILE (where its outcome goes, as JSON).
"""

import http.cookiejar
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser

MAX_STEPS = 15
TEXT_LIMIT = 3000
MAX_SIGN_INS = 2

SYSTEM = (
    "You browse a website by fetching its pages by path. Each page comes back as its title, "
    "its visible text and its links that have an id. Finish by calling report, with success "
    "true only if the task is done."
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "fetch",
            "description": "GET a page of the site by its path, such as /news or a link's href.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "report",
            "description": "End the task with its outcome.",
            "parameters": {
                "type": "object",
                "properties": {
                    "success": {"type": "boolean"},
                    "explanation": {"type": "string"},
                },
                "required": ["success", "explanation"],
            },
        },
    },
]


class PageReader(HTMLParser):
    """Reads a page into its title, its visible text and its links that have an id."""

    def __init__(self):
        super().__init__()
        self.title = ""
        self.text = []
        self.links = []
        self.has_password_field = False
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("script", "style"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "input" and attributes.get("type") == "password":
            self.has_password_field = True
        elif tag == "a" and attributes.get("id"):
            self.links.append(
                {"id": attributes["id"], "href": attributes.get("href", ""), "class": attributes.get("class", "")}
            )

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self._skip and data.strip():
            self.text.append(data.strip())


class Site:
    """The site over HTTP with a cookie jar, signing in when a page asks for it and an account is set."""

    def __init__(self, base_url, username, password):
        self.base_url = base_url.rstrip("/") + "/"
        self.username = username
        self.password = password
        self.sign_ins = 0
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def _open(self, path, form=None):
        url = urllib.parse.urljoin(self.base_url, path.lstrip("/"))
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            with self.opener.open(url, data=data, timeout=30) as response:
                return response.status, response.geturl(), response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as error:
            return error.code, url, error.read().decode("utf-8", "replace")

    def fetch(self, path):
        status, url, html = self._open(path)
        page = PageReader()
        page.feed(html)
        note = None
        if page.has_password_field and self.username and self.password and self.sign_ins < MAX_SIGN_INS:
            # Signing in is this agent's own business: the model never sees the password, and the
            # page that asked is not requested again (on some sites that would act for the model).
            self.sign_ins += 1
            status, url, html = self._open("login", {"acct": self.username, "pw": self.password, "goto": "news"})
            page = PageReader()
            page.feed(html)
            note = (
                f"The page asked for a login, so the agent signed in as {self.username} and opened the front page; "
                "the request that led to the login page was not repeated."
            )
        observation = {
            "status": status,
            "url": urllib.parse.urlsplit(url)._replace(scheme="", netloc="").geturl(),
            "title": page.title,
            "text": " ".join(page.text)[:TEXT_LIMIT],
            "links": page.links,
        }
        if note:
            observation["note"] = note
        return observation


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} is not set")
    return value


def post(path, body):
    base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
    request = urllib.request.Request(
        f"{base}/{path}",
        data=json.dumps({"model": os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), **body}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {env('OPENAI_API_KEY')}"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


class ChatCompletions:
    """The conversation as Chat Completions messages."""

    def __init__(self, task):
        self.messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]

    def ask(self):
        """The model's text and its tool calls, as (id, name, arguments) triples."""
        reply = post("chat/completions", {"messages": self.messages, "tools": TOOLS})["choices"][0]["message"]
        self.messages.append({key: reply[key] for key in ("role", "content", "tool_calls") if key in reply})
        calls = [(call["id"], call["function"]["name"], call["function"]["arguments"]) for call in reply.get("tool_calls") or []]
        return reply.get("content"), calls

    def answer(self, call_id, result):
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)})


class Responses:
    """The conversation as Responses API input items, sent whole each time (store: false)."""

    TOOLS = [{"type": "function", **tool["function"]} for tool in TOOLS]

    def __init__(self, task):
        self.items = [{"role": "user", "content": task}]

    def ask(self):
        output = post("responses", {"instructions": SYSTEM, "input": self.items, "tools": self.TOOLS, "store": False})["output"]
        self.items.extend(output)
        text = "".join(part["text"] for item in output if item["type"] == "message" for part in item["content"] if part["type"] == "output_text")
        calls = [(item["call_id"], item["name"], item["arguments"]) for item in output if item["type"] == "function_call"]
        return text or None, calls

    def answer(self, call_id, result):
        self.items.append({"type": "function_call_output", "call_id": call_id, "output": json.dumps(result)})


def run(task, site):
    conversation = Responses(task) if os.environ.get("OPENAI_API") == "responses" else ChatCompletions(task)
    for step in range(1, MAX_STEPS + 1):
        text, calls = conversation.ask()
        if not calls:
            return {"success": False, "summary": text or "The model stopped without reporting."}
        for call_id, name, arguments in calls:
            args = json.loads(arguments or "{}")
            print(f"step {step}: {name} {json.dumps(args)}", flush=True)
            if name == "report":
                return {"success": args.get("success") is True, "summary": str(args.get("explanation", ""))}
            result = site.fetch(str(args.get("path", "/"))) if name == "fetch" else {"error": f"no tool named {name}"}
            conversation.answer(call_id, result)
    return {"success": False, "summary": f"Gave up after {MAX_STEPS} steps."}


def main():
    site = Site(env("HARNESS_SITE_URL"), os.environ.get("HARNESS_SITE_USERNAME"), os.environ.get("HARNESS_SITE_PASSWORD"))
    outcome = run(env("HARNESS_TASK"), site)
    with open(env("HARNESS_CLAIM_FILE"), "w", encoding="utf-8") as claim:
        json.dump(outcome, claim)
    print(f"claimed {'success' if outcome['success'] else 'failure'}: {outcome['summary']}", flush=True)


if __name__ == "__main__":
    main()
