"""The console in a real browser (Debian's Chromium through Selenium): what a person does.

Run by tests/it/platform/console.rs against a live `aelc serve`:

    browse.py BASE_URL KEY RUN_ID OTHER_RUN_ID SCREENSHOT_DIR APPROVE_IDS REJECT_ID

Signs in with KEY, opens every page, follows the run RUN_ID (which made a delegated call)
into its receipt tree (its input and trace link beside it), approves the calls APPROVE_IDS
(comma-separated) and rejects REJECT_ID with the page's buttons — calls an agent asked for
over MCP and is waiting on (tests/console/agent.py) —
checks that OTHER_RUN_ID (another account's run) is not found, that a form posted without
its CSRF token or from another origin is refused, the security headers, the session cookie's
flags, that signing out ends the session, and that the browser asked nothing of any host but
the gateway. Every check that fails raises; the names of the checks that passed are printed
as one JSON line at the end, for the Rust test to compare.
"""

import http.client
import json
import re
import sys
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, KEY, RUN_ID, OTHER_RUN_ID, SHOTS, APPROVE, REJECT = sys.argv[1:8]
APPROVE = APPROVE.split(",")
HOST = urllib.parse.urlparse(BASE).netloc
passed = []


def check(name, condition, detail=""):
    if not condition:
        raise AssertionError(f"{name}: {detail}")
    passed.append(name)


def request(method, path, cookie=None, body=None, headers=None):
    """One request outside the browser (no redirect followed): status, headers, text."""
    conn = http.client.HTTPConnection(HOST, timeout=30)
    sent = dict(headers or {})
    if cookie:
        sent["Cookie"] = f"aelc_console={cookie}"
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    text = response.read().decode("utf-8", "replace")
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, text


options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"):
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_page_load_timeout(30)


def shot(name):
    driver.save_screenshot(f"{SHOTS}/{name}.png")


def press(selector):
    """Clicks a button or link that leaves the page, and waits for the next page."""
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, selector).click()
    WebDriverWait(driver, 20).until(left(old))


def left(element):
    """Whether `element`'s page is gone. Selenium's `staleness_of` expects a stale-element error
    only, but Chromium can answer a node of the page being replaced with "Node with given id
    does not belong to the document" (an unknown error): that is gone too."""
    def gone(_):
        try:
            element.is_enabled()
            return False
        except WebDriverException:
            return True
    return gone


def heading():
    return driver.find_element(By.TAG_NAME, "h1").text


try:
    # Signing in: the console sends a stranger to the form.
    driver.get(BASE + "/console")
    check("unsigned_goes_to_sign_in", driver.current_url.endswith("/console/sign-in"),
          driver.current_url)
    shot("sign-in")
    driver.find_element(By.NAME, "key").send_keys("ael_" + "0" * 64)
    press("form.sign-in button")
    check("a_wrong_key_is_refused", "belongs to no account" in driver.page_source)
    driver.find_element(By.NAME, "key").send_keys(KEY)
    press("form.sign-in button")
    check("signed_in_to_agents", heading() == "Agents", heading())
    cookie = driver.get_cookie("aelc_console")
    check("cookie_http_only", cookie is not None and cookie.get("httpOnly") is True, cookie)
    check("cookie_same_site_strict", cookie.get("sameSite") == "Strict", cookie)
    check("key_not_in_cookie", KEY not in json.dumps(driver.get_cookies()))
    secret = cookie["value"]

    # Agents and one agent's page with its plots.
    names = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table a")]
    check("agents_listed", "acme/echo" in names and "acme/pipeline" in names, names)
    shot("agents")
    press("table a[href='/console/agents/acme/echo']")
    check("agent_page", heading() == "acme/echo", heading())
    check("agent_plots", len(driver.find_elements(By.CSS_SELECTOR, "figure.plot svg rect.bar")) > 0)
    check("agent_schema", "\"text\"" in driver.find_element(By.CSS_SELECTOR, "pre.json").text)
    shot("agent")

    # Runs, then the run with a delegated call.
    driver.get(BASE + "/console/runs")
    ids = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "table.runs a")]
    check("runs_listed", RUN_ID in ids, ids)
    check("other_accounts_run_not_listed", OTHER_RUN_ID not in driver.page_source)
    shot("runs")
    driver.get(BASE + "/console/runs?status=invalid_output")
    statuses = {s.text for s in driver.find_elements(By.CSS_SELECTOR, "table.runs .status")}
    check("runs_filtered", statuses == {"invalid_output"}, statuses)
    driver.get(BASE + "/console/runs")
    press(f"table.runs a[href='/console/runs/{RUN_ID}']")
    check("run_page", heading() == RUN_ID, heading())
    trees = driver.find_elements(By.CSS_SELECTOR, "details.receipt details.receipt")
    check("delegated_call_nested", len(trees) == 1, len(trees))
    binding = driver.find_element(By.CSS_SELECTOR, "table.attempts tbody td code").text
    check("attempt_shown", binding == "m", binding)
    check("output_shown", "reply" in driver.page_source)
    shown_input = driver.find_element(By.CSS_SELECTOR, "pre.json.input").text
    check("input_shown", "[ok] through the pipeline" in shown_input, shown_input)
    trace = driver.find_element(By.CSS_SELECTOR, "a.trace").get_attribute("href")
    check("trace_linked", re.fullmatch(r"http://127\.0\.0\.1:16686/trace/[0-9a-f]{32}", trace), trace)
    shot("run")

    # Another account's run, an unknown one, a bad filter: pages, not errors.
    status, _, text = request("GET", f"/console/runs/{OTHER_RUN_ID}", secret)
    check("other_accounts_run_is_404", status == 404, status)
    status, _, _ = request("GET", "/console/runs/rcpt_unknown", secret)
    check("unknown_run_is_404", status == 404, status)
    status, _, text = request("GET", "/console/runs?status=nonsense", secret)
    check("bad_filter_is_400", status == 400 and "not a run status" in text, status)
    status, _, _ = request("GET", "/console/money?page=999", secret)
    check("page_past_the_end_is_404", status == 404, status)

    # Money and files.
    driver.get(BASE + "/console/money")
    check("money_page", "Available" in driver.page_source and "reserve" in driver.page_source)
    captions = [c.text for c in driver.find_elements(By.CSS_SELECTOR, "figure.plot figcaption")]
    check("spend_per_agent", any(c.startswith("acme/pipeline: 1 EUR") for c in captions), captions)
    shot("money")
    driver.get(BASE + "/console/files")
    check("files_page", heading() == "Files", heading())
    shot("files")

    # Mandates: approve one pending call, reject the other, with the page's own forms.
    driver.get(BASE + "/console/mandates")
    waiting = len(APPROVE) + 1
    check("all_pending", f"Waiting for your approval ({waiting})" in driver.page_source, waiting)
    shot("mandates")
    token = driver.find_element(By.CSS_SELECTOR, "form.decide input[name=csrf]").get_attribute("value")
    status, _, _ = request("POST", f"/console/approvals/{APPROVE[0]}/approve", secret, body="")
    check("post_without_csrf_refused", status == 403, status)
    status, _, _ = request("POST", f"/console/approvals/{APPROVE[0]}/approve", secret,
                           body="csrf=" + token, headers={"Origin": "https://evil.example"})
    check("post_from_another_origin_refused", status == 403, status)
    for approval in APPROVE:
        press(f"article#{approval} button.approve")
        waiting -= 1
        check("approved_in_browser", f"Waiting for your approval ({waiting})" in driver.page_source)
    press(f"article#{REJECT} button.reject")
    check("rejected_in_browser", "Waiting for your approval (0)" in driver.page_source)
    status, _, text = request("POST", f"/console/approvals/{APPROVE[0]}/approve", secret,
                              body="csrf=" + token)
    check("decided_once", status == 409, status)
    status, _, _ = request("POST", "/console/approvals/appr_theirs/approve", secret,
                           body="csrf=" + token)
    check("other_accounts_approval_is_404", status == 404, status)

    # Headers of every page.
    status, headers, _ = request("GET", "/console/agents", secret)
    csp = headers.get("content-security-policy", "")
    check("csp_forbids_scripts", "default-src 'none'" in csp and "script-src" not in csp, csp)
    check("frame_denied", headers.get("x-frame-options") == "DENY", headers)
    check("pages_not_cached", headers.get("cache-control") == "no-store", headers)
    check("no_inline_script", "<script" not in driver.page_source.lower())

    # Signing out ends the session in the store: the old cookie opens nothing.
    press("form.sign-out button")
    check("signed_out", driver.current_url.endswith("/console/sign-in"), driver.current_url)
    status, headers, _ = request("GET", "/console/agents", secret)
    check("old_session_ended", status == 303 and headers.get("location") == "/console/sign-in",
          (status, headers))

    # The browser asked nothing of any host but the gateway.
    urls = set()
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.add(message["params"]["request"]["url"])
    elsewhere = sorted(u for u in urls if not (u.startswith(BASE) or u.startswith("data:")))
    check("nothing_leaves_the_gateway", not elsewhere and len(urls) > 5, elsewhere or urls)
finally:
    driver.quit()

print(json.dumps(passed))
