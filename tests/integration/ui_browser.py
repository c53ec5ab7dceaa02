#!/usr/bin/env python3
"""The dashboard in headless Chromium (Selenium): every page loads without
console errors, shows the catalog's numbers, the package's channel graph with
its head, links navigate, the resolver answers. Screenshots go to --shots.
Exit status 0 when every check passed, 1 otherwise (each failure printed)."""
import argparse
import os
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

ap = argparse.ArgumentParser()
for a in ("base", "catalog", "packages", "package", "head", "chrome", "driver", "profile", "shots", "pull"):
    ap.add_argument("--" + a, required=True)
args = ap.parse_args()

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


opts = webdriver.ChromeOptions()
opts.binary_location = args.chrome
for o in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--user-data-dir=" + args.profile, "--window-size=1280,1000"):
    opts.add_argument(o)
opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(args.driver), options=opts)
wait = WebDriverWait(driver, 20)


def severe(page):
    errs = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    check(not errs, "%s: console errors: %s" % (page, [e.get("message") for e in errs]))


def shot(name):
    driver.save_screenshot(os.path.join(args.shots, name + ".png"))


def no_loading():
    wait.until(lambda d: not d.find_elements(By.XPATH, "//main//p[contains(., 'Loading')]"))


def h1(text):
    # the title shows while the page loads: wait for the page itself too
    wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "main h1"), text))
    no_loading()


try:
    t0 = time.time()
    # ---- catalogs
    driver.get(args.base + "/ui/")
    h1("Catalogs")
    no_loading()
    row = wait.until(EC.presence_of_element_located(
        (By.XPATH, "//main//table//tr[th//a[normalize-space()='%s']]" % args.catalog)))
    cells = [c.text.strip() for c in row.find_elements(By.XPATH, "./th|./td")]
    print("catalog row:", cells)
    check(cells[3] == args.packages, "catalogs page: packages %r, expected %s" % (cells[3], args.packages))
    check(cells[1] == "2", "catalogs page: revision %r, expected 2" % cells[1])
    check(int(cells[4] or 0) > 0, "catalogs page: no bundle count")
    check(driver.find_element(By.CSS_SELECTOR, "nav a[aria-current='page']").text == "Catalogs",
          "catalogs page: navigation does not mark the current page")
    check(len(driver.find_elements(By.CSS_SELECTOR, "header, nav, main, footer")) >= 4, "landmarks missing")
    check(all(driver.find_elements(By.CSS_SELECTOR, "label[for='%s']" % i.get_attribute("id"))
              for i in driver.find_elements(By.CSS_SELECTOR, "input, select")),
          "an input has no label")
    shot("1-catalogs")
    severe("catalogs")

    # ---- one catalog, reached by its link
    row.find_element(By.TAG_NAME, "a").click()
    h1("Catalog " + args.catalog)
    wait.until(EC.presence_of_element_located((By.ID, "h-pkgs")))
    check(driver.current_url.endswith("#/catalogs/" + args.catalog), "catalog link: URL " + driver.current_url)
    pkg_links = driver.find_elements(By.XPATH, "//section[@aria-labelledby='h-pkgs']//tbody//a")
    check(len(pkg_links) == int(args.packages), "catalog page lists %d packages, expected %s" % (len(pkg_links), args.packages))
    revs = driver.find_elements(By.XPATH, "//section[@aria-labelledby='h-revs']//tbody/tr")
    check(len(revs) == 2, "catalog page: %d revisions, expected 2" % len(revs))
    if len(revs) == 2:
        newest = [c.text.strip() for c in revs[0].find_elements(By.XPATH, "./th|./td")]
        oldest = [c.text.strip() for c in revs[1].find_elements(By.XPATH, "./th|./td")]
        print("revisions:", newest, oldest)
        n = int(args.packages)
        check(newest[0] == "2" and newest[1] == "yes" and newest[3] == "%d (+1)" % n,
              "newest revision row %r: expected revision 2, current, %d (+1) packages" % (newest, n))
        check(oldest[0] == "1" and oldest[3] == str(n - 1) and oldest[-1] == "upload",
              "oldest revision row %r: expected revision 1, %d packages, an upload" % (oldest, n - 1))
    shot("2-catalog")
    severe("catalog")

    # ---- the package, by its link; its graphs
    driver.find_element(By.XPATH, "//section[@aria-labelledby='h-pkgs']//a[normalize-space()='%s']" % args.package).click()
    h1("Package " + args.package)
    # the facts of the drawn page, read in one go once every graph is drawn
    facts = WebDriverWait(driver, 30).until(lambda d: d.execute_script("""
        var chans = document.querySelectorAll("section.channel");
        if (!chans.length || document.querySelectorAll(".channel .graph p.muted").length) return null;
        var first = chans[0], svg = first.querySelector(".graph svg");
        if (!svg) return null;
        var r = svg.getBoundingClientRect();
        return {chans: chans.length, graphs: document.querySelectorAll(".channel .graph svg").length,
                h3: first.querySelector("h3").textContent, head: first.querySelector("code.head").textContent,
                w: r.width, h: r.height, text: svg.textContent,
                label: first.querySelector(".graph").getAttribute("aria-label")};"""))
    check(facts["graphs"] == facts["chans"], "package page: %d graphs for %d channels" % (facts["graphs"], facts["chans"]))
    check("default" in facts["h3"], "the default channel is not first")
    check(facts["head"] == args.head, "head shown %r, expected %r" % (facts["head"], args.head))
    check(facts["w"] > 50 and facts["h"] > 20, "graph picture is empty: %r" % ((facts["w"], facts["h"]),))
    check(args.head in facts["text"], "the graph picture does not show the head %s" % args.head)
    check(args.head in (facts["label"] or ""), "the graph has no accessible name with its head")
    bundles = driver.find_elements(By.XPATH, "//section[@aria-labelledby='h-bundles']//tbody/tr")
    check(len(bundles) > 0, "package page: no bundle")
    shot("3-package")
    severe("package")

    # ---- breadcrumbs back to the catalog, then the resolver by keyboard-reachable link
    driver.find_element(By.CSS_SELECTOR, ".crumbs a[href='#/catalogs/%s']" % args.catalog).click()
    h1("Catalog " + args.catalog)
    driver.back()
    h1("Package " + args.package)
    driver.find_element(By.LINK_TEXT, "Resolve this package").click()
    h1("Resolver")
    wait.until(EC.presence_of_element_located((By.ID, "h-result")))
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#result .ok, #result .bad, #result .error"))
    res = driver.find_element(By.ID, "result").text
    print("resolver:", res.splitlines()[:3])
    check("Satisfiable" in res and args.head in res, "resolver: %r does not install the head %s" % (res[:300], args.head))
    shot("4-resolve")
    # the form by hand: an unknown package gives an explanation
    driver.find_element(By.ID, "r-package").clear()
    driver.find_element(By.ID, "r-package").send_keys("no-such-package-xyz")
    Select(driver.find_element(By.ID, "r-catalog")).select_by_value(args.catalog)
    driver.find_element(By.CSS_SELECTOR, "#resolve-form button[type=submit]").click()
    wait.until(lambda d: "no-such-package-xyz" in d.find_element(By.ID, "result").text
               and d.find_elements(By.CSS_SELECTOR, "#result .bad, #result .error"))
    shot("5-resolve-unsat")
    severe("resolver")

    # ---- repositories and jobs (empty here), via the navigation
    for name in ("Repositories", "Jobs"):
        driver.find_element(By.LINK_TEXT, name).click()
        h1(name)
        no_loading()
        check(driver.find_elements(By.CSS_SELECTOR, "main .empty, main table"), name + ": no table or empty state")
        shot("6-" + name.lower())
        severe(name)

    # ---- the pipeline views: a repository, its pull requests, one pull
    # request's checks and findings, the catalog's images
    if args.pull != "0":
        driver.get(args.base + "/ui/#/repositories")
        h1("Repositories")
        driver.find_element(By.LINK_TEXT, "community-operators").click()
        h1("Repository community-operators")
        rows = driver.find_elements(By.CSS_SELECTOR, "main table tbody tr")
        check(len(rows) == 1 and "failure" in rows[0].text and "#" + args.pull in rows[0].text,
              "repository page: pull requests %s" % [r.text for r in rows])
        shot("8-repository")
        severe("repository")
        driver.find_element(By.LINK_TEXT, "#" + args.pull).click()
        h1("Pull request #" + args.pull)
        tables = driver.find_elements(By.CSS_SELECTOR, "main table")
        check(len(tables) >= 3, "pull request page: %d tables" % len(tables))
        checks = [r.text for r in tables[0].find_elements(By.CSS_SELECTOR, "tbody tr")] if tables else []
        check(len(checks) == 9 and any(c.startswith("graph") and "failure" in c for c in checks),
              "checks table: %s" % checks)
        findings = [r.text for r in tables[1].find_elements(By.CSS_SELECTOR, "tbody tr")] if len(tables) > 1 else []
        check(any("graph/G5" in f and "catalogs/" in f for f in findings), "findings: %s" % findings[:5])
        shot("9-pull")
        severe("pull request")
        driver.get(args.base + "/ui/#/catalogs/" + args.catalog)
        h1("Catalog " + args.catalog)
        imgs = driver.find_elements(By.XPATH, "//section[h2[.='Images']]//tbody/tr")
        check(len(imgs) == 1 and "registry.example.com/org/community-catalog" in imgs[0].text and "latest, rev-2" in imgs[0].text,
              "catalog images: %s" % [r.text for r in imgs])
        severe("catalog images")

    # ---- a phone-sized window: nothing wider than the screen but tables in their scrollers
    driver.set_window_size(390, 844)
    driver.get(args.base + "/ui/#/catalogs/%s/packages/%s" % (args.catalog, args.package))
    h1("Package " + args.package)
    WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".channel .graph svg"))
    over = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    check(over <= 1, "phone layout scrolls sideways by %spx" % over)
    shot("7-phone-package")
    severe("phone")

    # ---- an unknown route
    driver.get(args.base + "/ui/#/nowhere")
    h1("Not found")
    severe("not found")
    print("browser checks took %.1fs" % (time.time() - t0))
except Exception as e:  # a wait that timed out, an element missing
    failures.append(repr(e))
    print("FAIL:", repr(e)[:500])
    try:
        shot("failure")
        print("page:", driver.find_element(By.TAG_NAME, "main").text[:800])
        print("console:", driver.get_log("browser"))
    except Exception:
        pass
finally:
    driver.quit()

print("%d browser failures" % len(failures))
sys.exit(1 if failures else 0)
