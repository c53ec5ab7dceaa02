/* fbcd dashboard: a single-page app over the REST API (no framework).
 * Routes live in the URL fragment: #/, #/catalogs/C, #/catalogs/C/packages/P,
 * #/resolve, #/repositories, #/repositories/R, #/repositories/R/pulls/N, #/jobs. Every value from the API is written
 * with textContent (never innerHTML), except the graph pictures, which are
 * the server's own SVG, parsed as XML and cleaned of scripts and handlers. */
"use strict";

(function () {
	var main = document.getElementById("main");
	var tokenInput = document.getElementById("token");
	var TOKEN_KEY = "fbcd.token";
	var generation = 0; /* bumped on every navigation: late answers are dropped */

	/* ------------------------------------------------------------ helpers */

	function el(tag, attrs) {
		var e = document.createElement(tag);
		var i;
		if (attrs) {
			Object.keys(attrs).forEach(function (k) {
				if (attrs[k] === null || attrs[k] === undefined || attrs[k] === false) return;
				if (k === "text") e.textContent = String(attrs[k]);
				else if (k === "className") e.className = attrs[k];
				else e.setAttribute(k, attrs[k] === true ? "" : String(attrs[k]));
			});
		}
		for (i = 2; i < arguments.length; i++) {
			var c = arguments[i];
			if (c === null || c === undefined || c === false) continue;
			if (Array.isArray(c)) c.forEach(function (x) { if (x) e.appendChild(x); });
			else e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
		}
		return e;
	}

	function seg(s) { return encodeURIComponent(s); }

	function link(href, text) { return el("a", { href: href, text: text }); }

	function token() {
		try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch (e) { return ""; }
	}

	function ApiError(status, problem, path) {
		this.status = status;
		this.problem = problem;
		this.path = path;
		this.message = (problem && (problem.detail || problem.title)) || ("HTTP " + status);
	}

	function api(path, opts) {
		opts = opts || {};
		var headers = { Accept: opts.accept || "application/json" };
		var t = token();
		if (t) headers.Authorization = "Bearer " + t;
		if (opts.body !== undefined) headers["Content-Type"] = "application/json";
		return fetch(path, {
			method: opts.method || "GET",
			headers: headers,
			body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
			credentials: "same-origin",
			cache: "no-cache"
		}).then(function (r) {
			if (opts.text && r.ok) return r.text();
			var ct = r.headers.get("Content-Type") || "";
			var parse = ct.indexOf("json") >= 0 ? r.json() : r.text().then(function () { return null; });
			return parse.then(function (body) {
				if (!r.ok) throw new ApiError(r.status, body, path);
				return body;
			});
		});
	}

	function problemBox(err) {
		var msg = err && err.message ? err.message : String(err);
		var box = el("div", { className: "error", role: "alert" },
			el("p", null, el("strong", { text: "Could not load: " }), msg));
		if (err && (err.status === 401 || err.status === 403))
			box.appendChild(el("p", { text: "This server needs a token for reads: enter one in the “API token” field above." }));
		if (err && err.problem && err.problem.requestId)
			box.appendChild(el("p", { className: "muted", text: "Request id: " + err.problem.requestId }));
		return box;
	}

	function empty(text) { return el("p", { className: "empty", text: text }); }

	function fmtDate(s) {
		if (!s) return "";
		var d = new Date(s);
		if (isNaN(d.getTime())) return String(s);
		return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
	}

	function shortDigest(d) {
		if (!d) return "";
		var s = String(d);
		var i = s.indexOf(":");
		return i >= 0 ? s.slice(0, i + 13) : s.slice(0, 12);
	}

	function table(caption, cols, rows) {
		var head = el("tr", null, cols.map(function (c) {
			return el("th", { scope: "col", className: c.cls || null, text: c.label });
		}));
		var body = el("tbody", null, rows.map(function (r) {
			return el("tr", null, cols.map(function (c, i) {
				var v = c.get(r);
				var td = el(i === 0 ? "th" : "td", { className: c.cls || null });
				if (i === 0) td.setAttribute("scope", "row");
				if (v instanceof Node) td.appendChild(v);
				else if (v !== null && v !== undefined) td.textContent = String(v);
				return td;
			}));
		}));
		return el("div", { className: "table-wrap" },
			el("table", null, caption ? el("caption", { text: caption }) : null, el("thead", null, head), body));
	}

	/* Every page of a paged list (bounded: at most `max` items). */
	function all(path, max) {
		var items = [];
		max = max || 5000;
		function page(cursor) {
			var sep = path.indexOf("?") >= 0 ? "&" : "?";
			var p = path + sep + "limit=1000" + (cursor ? "&cursor=" + seg(cursor) : "");
			return api(p).then(function (r) {
				items = items.concat(r.items || []);
				if (r.next && items.length < max) return page(r.next);
				return items;
			});
		}
		return page(null);
	}

	function count(counts, key) {
		if (!counts) return null;
		if (counts[key] !== undefined) return counts[key];
		if (counts[key.replace(/s$/, "")] !== undefined) return counts[key.replace(/s$/, "")];
		return null;
	}

	function show(title, nodes, navKey) {
		main.textContent = "";
		document.title = title + " · fbcd";
		main.appendChild(el("h1", { text: title }));
		nodes.forEach(function (n) { if (n) main.appendChild(n); });
		document.querySelectorAll("nav a[data-nav]").forEach(function (a) {
			if (a.getAttribute("data-nav") === navKey) a.setAttribute("aria-current", "page");
			else a.removeAttribute("aria-current");
		});
	}

	function loading(title, navKey) { show(title, [el("p", { className: "muted", text: "Loading…" })], navKey); }

	/* ------------------------------------------------------------- pages */

	function pageCatalogs(gen) {
		loading("Catalogs", "catalogs");
		return all("/v1/catalogs").then(function (cats) {
			return Promise.all(cats.map(function (c) {
				if (!c.currentRevision) return Promise.resolve(null);
				return api("/v1/catalogs/" + seg(c.name) + "/revisions/" + c.currentRevision)
					.catch(function () { return null; });
			})).then(function (revs) {
				if (gen !== generation) return;
				if (!cats.length) {
					show("Catalogs", [empty("No catalog yet. Create one with POST /v1/catalogs and push content with PUT /v1/catalogs/{catalog}/content.")], "catalogs");
					return;
				}
				show("Catalogs", [table(cats.length + " catalog" + (cats.length === 1 ? "" : "s"), [
					{ label: "Name", get: function (x) { return link("#/catalogs/" + seg(x.c.name), x.c.displayName ? x.c.displayName + " (" + x.c.name + ")" : x.c.name); } },
					{ label: "Revision", cls: "num", get: function (x) { return x.c.currentRevision === null ? "—" : x.c.currentRevision; } },
					{ label: "Digest", get: function (x) { return el("code", { title: x.c.digest || "", text: shortDigest(x.c.digest) || "—" }); } },
					{ label: "Packages", cls: "num", get: function (x) { var n = x.r && count(x.r.counts, "packages"); return n === null || n === undefined ? "—" : n; } },
					{ label: "Bundles", cls: "num", get: function (x) { var n = x.r && count(x.r.counts, "bundles"); return n === null || n === undefined ? "—" : n; } },
					{ label: "Updated", cls: "wide", get: function (x) { return fmtDate((x.r && x.r.createdAt) || x.c.updatedAt); } },
					{ label: "Last change", cls: "wide", get: function (x) { return provenance(x.r) || x.c.source || "upload"; } }
				], cats.map(function (c, i) { return { c: c, r: revs[i] }; }))], "catalogs");
			});
		});
	}

	/* Where a revision came from: repository, commit, pull request, author
	 * (null for uploads through the API). */
	function provenance(r) {
		var p = r && r.provenance;
		if (!p || typeof p !== "object") return null;
		var out = el("span", { className: "prov" });
		if (p.repository) out.appendChild(link("#/repositories", p.repository));
		if (p.commit) out.appendChild(el("span", null, " @ ", el("code", { title: p.commit, text: String(p.commit).slice(0, 12) })));
		if (p.pullRequest !== null && p.pullRequest !== undefined) out.appendChild(document.createTextNode(", pull request #" + p.pullRequest));
		if (p.author) out.appendChild(document.createTextNode(", by " + p.author));
		if (p.committedAt) out.appendChild(document.createTextNode(", " + fmtDate(p.committedAt)));
		return out.childNodes.length ? out : null;
	}

	/* "+n" / "−n" against the previous revision's count. */
	function delta(r, prev, key) {
		var n = count(r.counts, key);
		if (n === null) return "—";
		if (!prev) return String(n);
		var d = n - (count(prev.counts, key) || 0);
		return d === 0 ? String(n) : n + " (" + (d > 0 ? "+" : "−") + Math.abs(d) + ")";
	}

	/* Newest first, each with the revision before it (for the changes). */
	function history(revs) {
		var asc = revs.slice().sort(function (a, b) { return a.revision - b.revision; });
		return asc.map(function (r, i) {
			var x = {};
			Object.keys(r).forEach(function (k) { x[k] = r[k]; });
			x.prev = i > 0 ? asc[i - 1] : null;
			return x;
		}).reverse();
	}

	function pageCatalog(gen, cat) {
		var base = "/v1/catalogs/" + seg(cat);
		loading("Catalog " + cat, "catalogs");
		var images = api(base + "/images").then(function (r) { return r.items || []; }, function () { return null; });
		return Promise.all([api(base), all(base + "/revisions", 200), all(base + "/packages"), images]).then(function (res) {
			if (gen !== generation) return;
			var c = res[0], revs = res[1], pkgs = res[2], imgs = res[3];
			var facts = el("dl", { className: "facts" },
				el("dt", { text: "Current revision" }), el("dd", { text: c.currentRevision === null ? "none" : c.currentRevision }),
				el("dt", { text: "Digest" }), el("dd", null, el("code", { text: c.digest || "—" })),
				el("dt", { text: "Priority" }), el("dd", { text: c.priority }),
				c.source ? el("dt", { text: "Source" }) : null, c.source ? el("dd", { text: c.source }) : null);
			var revTable = revs.length ? table("Revision history (newest first)", [
				{ label: "Revision", cls: "num", get: function (r) { return r.revision; } },
				{ label: "Current", get: function (r) { return r.current ? "yes" : ""; } },
				{ label: "Created", get: function (r) { return fmtDate(r.createdAt); } },
				{ label: "Packages", cls: "num", get: function (r) { return delta(r, r.prev, "packages"); } },
				{ label: "Bundles", cls: "num", get: function (r) { return delta(r, r.prev, "bundles"); } },
				{ label: "Channels", cls: "num wide", get: function (r) { return delta(r, r.prev, "channels"); } },
				{ label: "Digest", cls: "wide", get: function (r) { return el("code", { title: r.digest, text: shortDigest(r.digest) }); } },
				{ label: "Provenance", get: function (r) { return provenance(r) || el("span", { className: "muted", text: "upload" }); } }
			], history(revs)) : empty("No revision yet: push content with PUT " + base + "/content.");
			var pkgTable = pkgs.length ? table(pkgs.length + " packages", [
				{ label: "Package", get: function (p) { return link("#/catalogs/" + seg(cat) + "/packages/" + seg(p.name), p.name); } },
				{ label: "Default channel", get: function (p) { return p.defaultChannel || "—"; } },
				{ label: "Channels", cls: "num", get: function (p) { return p.channels; } },
				{ label: "Bundles", cls: "num", get: function (p) { return p.bundles; } },
				{ label: "Latest version", cls: "wide", get: function (p) { return p.latestVersion || ""; } },
				{ label: "Deprecated", cls: "wide", get: function (p) { return p.deprecated ? "deprecated" : ""; } }
			], pkgs) : empty("This revision has no package.");
			var imgTable = imgs === null ? empty("This server does not publish images.") : imgs.length ? table(imgs.length + " images", [
				{ label: "Revision", cls: "num", get: function (i) { return i.revision; } },
				{ label: "Image", get: function (i) { return el("code", { text: i.repository }); } },
				{ label: "Tags", get: function (i) { return (i.tags || []).join(", "); } },
				{ label: "Platforms", cls: "wide", get: function (i) { return (i.platforms || []).join(", "); } },
				{ label: "Digest", get: function (i) { return el("code", { className: "digest", title: i.digest, text: shortDigest(i.digest) }); } },
				{ label: "Pushed", cls: "wide", get: function (i) { return fmtDate(i.pushedAt); } }
			], imgs) : empty("No image published yet (a repository's publish targets, or POST " + base + "/images).");
			show("Catalog " + cat, [
				el("p", { className: "crumbs" }, link("#/", "Catalogs"), " / ", cat),
				facts,
				el("section", { "aria-labelledby": "h-revs" }, el("h2", { id: "h-revs", text: "Revisions" }), revTable),
				el("section", { "aria-labelledby": "h-imgs" }, el("h2", { id: "h-imgs", text: "Images" }), imgTable),
				el("section", { "aria-labelledby": "h-pkgs" }, el("h2", { id: "h-pkgs", text: "Packages" }), pkgTable)
			], "catalogs");
		});
	}

	/* The server's SVG, parsed as XML; scripts, foreign objects, event
	 * handlers and external references removed before it joins the page. */
	function cleanSvg(text) {
		var doc = new DOMParser().parseFromString(text, "image/svg+xml");
		var svg = doc.documentElement;
		if (!svg || svg.nodeName.toLowerCase() !== "svg" || doc.getElementsByTagName("parsererror").length)
			return null;
		Array.prototype.slice.call(svg.querySelectorAll("script, foreignObject")).forEach(function (n) { n.remove(); });
		Array.prototype.slice.call(svg.querySelectorAll("*")).concat([svg]).forEach(function (n) {
			Array.prototype.slice.call(n.attributes).forEach(function (a) {
				var name = a.name.toLowerCase();
				if (name.indexOf("on") === 0 || ((name === "href" || name === "xlink:href") && !/^#/.test(a.value)))
					n.removeAttribute(a.name);
			});
		});
		svg.removeAttribute("width");
		svg.removeAttribute("height");
		return document.importNode(svg, true);
	}

	/* Does this server draw SVG graphs (GET …/graph?format=svg)? Asked once
	 * of its API document, so that no request is made that it would refuse. */
	var svgSupport = null;
	function serverDrawsSvg() {
		if (!svgSupport) {
			svgSupport = api("/openapi.json").then(function (doc) {
				var op = doc && doc.paths && doc.paths["/v1/catalogs/{catalog}/packages/{package}/channels/{channel}/graph"];
				var params = (op && op.get && op.get.parameters) || [];
				return params.some(function (prm) {
					var sc = prm && prm.name === "format" && prm.schema;
					return !!(sc && Array.isArray(sc["enum"]) && sc["enum"].indexOf("svg") >= 0);
				});
			}).catch(function () { return false; });
		}
		return svgSupport;
	}

	var SVGNS = "http://www.w3.org/2000/svg";
	function sv(tag, attrs, text) {
		var e = document.createElementNS(SVGNS, tag);
		Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
		if (text !== undefined) e.textContent = text;
		return e;
	}

	/* Fallback drawing of the JSON graph when the server draws no SVG: nodes
	 * in layers by longest path from the oldest entries, edges styled by kind
	 * (replaces solid, skips dashed, skipRange dotted), the head outlined. */
	function drawGraph(g) {
		var nodes = g.nodes || [], edges = g.edges || [];
		var idx = {}, rank = [], i, pass, changed;
		nodes.forEach(function (n, k) { idx[n.name] = k; rank[k] = 0; });
		var es = edges.filter(function (e) { return idx[e.from] !== undefined && idx[e.to] !== undefined && e.from !== e.to; });
		/* an edge points from the newer entry to the one it upgrades from */
		for (pass = 0, changed = true; changed && pass < nodes.length + 1; pass++) {
			changed = false;
			es.forEach(function (e) {
				var a = idx[e.from], b = idx[e.to];
				if (rank[a] < rank[b] + 1) { rank[a] = rank[b] + 1; changed = true; }
			});
		}
		var layers = [];
		nodes.forEach(function (n, k) { (layers[rank[k]] = layers[rank[k]] || []).push(k); });
		layers = layers.filter(Boolean);
		var W = 260, H = 38, GX = 24, GY = 46, pos = [];
		var maxCols = Math.max.apply(null, layers.map(function (l) { return l.length; }).concat([1]));
		var width = maxCols * (W + GX) + GX, height = layers.length * (H + GY) + GY;
		layers.slice().reverse().forEach(function (l, row) {
			var off = (width - l.length * (W + GX) + GX) / 2;
			l.forEach(function (k, col) { pos[k] = { x: off + col * (W + GX), y: GY / 2 + row * (H + GY) }; });
		});
		var svg = sv("svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height });
		var defs = sv("defs");
		var marker = sv("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" });
		marker.appendChild(sv("path", { d: "M0,0 L10,5 L0,10 z", fill: "#4a5360" }));
		defs.appendChild(marker);
		svg.appendChild(defs);
		es.forEach(function (e) {
			var a = pos[idx[e.from]], b = pos[idx[e.to]];
			var line = sv("line", { x1: a.x + W / 2, y1: a.y + H, x2: b.x + W / 2, y2: b.y, stroke: "#4a5360", "stroke-width": 1.3, "marker-end": "url(#arrow)" });
			if (e.kind === "skips") line.setAttribute("stroke-dasharray", "6 4");
			if (e.kind === "skipRange") line.setAttribute("stroke-dasharray", "2 3");
			line.appendChild(sv("title", {}, e.from + " → " + e.to + " (" + e.kind + ")"));
			svg.appendChild(line);
		});
		nodes.forEach(function (n, k) {
			var p = pos[k], head = n.name === g.head;
			var grp = sv("g", { "class": "node" });
			grp.appendChild(sv("title", {}, n.name));
			grp.appendChild(sv("rect", { x: p.x, y: p.y, width: W, height: H, rx: 6,
				fill: head ? "#dbeafe" : n.deprecated ? "#fde8e8" : "#ffffff",
				stroke: head ? "#0b5cad" : "#6e7781", "stroke-width": head ? 2.5 : 1 }));
			var label = n.name.length > 34 ? n.name.slice(0, 33) + "…" : n.name;
			grp.appendChild(sv("text", { x: p.x + W / 2, y: p.y + 16, "text-anchor": "middle", "font-size": 12, fill: "#1b1f24" }, label));
			grp.appendChild(sv("text", { x: p.x + W / 2, y: p.y + 31, "text-anchor": "middle", "font-size": 11, fill: "#4a5360" },
				(n.version || "") + (head ? " (head)" : "") + (n.deprecated ? " (deprecated)" : "")));
			svg.appendChild(grp);
		});
		return svg;
	}

	function channelGraph(gen, cat, pkg, ch) {
		var box = el("div", { className: "graph", role: "img",
			"aria-label": "Upgrade graph of channel " + ch.name + (ch.head ? ", head " + ch.head : "") });
		var path = "/v1/catalogs/" + seg(cat) + "/packages/" + seg(pkg) + "/channels/" + seg(ch.name) + "/graph";
		box.appendChild(el("p", { className: "muted", text: "Drawing the graph…" }));
		serverDrawsSvg().then(function (svgOk) {
			if (svgOk)
				return api(path + "?format=svg", { accept: "image/svg+xml", text: true }).then(function (text) {
					var svg = cleanSvg(text);
					if (!svg) throw new Error("the server's picture could not be read");
					return svg;
				});
			return api(path).then(drawGraph);
		}).then(function (svg) {
			if (gen !== generation) return;
			box.textContent = "";
			svg.setAttribute("aria-hidden", "true");
			svg.setAttribute("focusable", "false");
			svg.classList.add("graph-svg");
			box.appendChild(svg);
		}).catch(function (err) {
			if (gen !== generation) return;
			box.textContent = "";
			box.appendChild(problemBox(err));
		});
		return box;
	}

	function pagePackage(gen, cat, pkg) {
		var base = "/v1/catalogs/" + seg(cat) + "/packages/" + seg(pkg);
		loading("Package " + pkg, "catalogs");
		return Promise.all([api(base), all(base + "/bundles")]).then(function (res) {
			if (gen !== generation) return;
			var p = res[0], bundles = res[1];
			var chans = (p.channels || []).slice().sort(function (a, b) {
				if (a.name === p.defaultChannel) return -1;
				if (b.name === p.defaultChannel) return 1;
				return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
			});
			var icon = el("img", { className: "pkg-icon", alt: "", width: 48, height: 48 });
			var t = token();
			fetch(base + "/icon", { headers: t ? { Authorization: "Bearer " + t } : {}, credentials: "same-origin" }).then(function (r) {
				return r.ok ? r.blob() : null;
			}).then(function (b) {
				if (b && /^image\/(png|svg\+xml|jpeg|gif|webp)$/.test(b.type)) { icon.src = URL.createObjectURL(b); icon.alt = pkg + " icon"; }
				else icon.remove();
			}, function () { icon.remove(); });
			var facts = el("dl", { className: "facts" },
				el("dt", { text: "Catalog" }), el("dd", null, link("#/catalogs/" + seg(cat), cat)),
				el("dt", { text: "Default channel" }), el("dd", { text: p.defaultChannel || "—" }),
				el("dt", { text: "Latest version" }), el("dd", { text: p.latestVersion || "—" }),
				el("dt", { text: "Bundles" }), el("dd", { text: bundles.length }),
				p.deprecation ? el("dt", { text: "Deprecated" }) : null,
				p.deprecation ? el("dd", { className: "bad", text: p.deprecation.message || "yes" }) : null);
			var chanSections = chans.map(function (ch) {
				var id = "ch-" + ch.name.replace(/[^A-Za-z0-9_-]/g, "_");
				return el("section", { className: "channel", "aria-labelledby": id },
					el("h3", { id: id }, ch.name, ch.name === p.defaultChannel ? el("span", { className: "badge", text: "default" }) : null),
					el("p", null, "Head: ", el("code", { className: "head", text: ch.head || "none" }),
						ch.deprecation ? el("span", { className: "bad", text: " — deprecated: " + (ch.deprecation.message || "") }) : null),
					channelGraph(gen, cat, pkg, ch));
			});
			var bundleTable = bundles.length ? table(bundles.length + " bundles", [
				{ label: "Bundle", get: function (b) { return b.name; } },
				{ label: "Version", get: function (b) { return b.version || ""; } },
				{ label: "Channels", cls: "wide", get: function (b) { return Array.isArray(b.channels) ? b.channels.join(", ") : ""; } },
				{ label: "Image", cls: "wide", get: function (b) { return b.image ? el("code", { text: b.image }) : ""; } }
			], bundles.slice().sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : 0; })) : empty("No bundle.");
			show("Package " + pkg, [
				el("p", { className: "crumbs" }, link("#/", "Catalogs"), " / ", link("#/catalogs/" + seg(cat), cat), " / ", pkg),
				icon,
				facts,
				el("p", null, link("#/resolve?catalog=" + seg(cat) + "&package=" + seg(pkg), "Resolve this package")),
				el("section", { "aria-labelledby": "h-chans" }, el("h2", { id: "h-chans", text: "Channels (" + chans.length + ")" }), chanSections),
				el("section", { "aria-labelledby": "h-bundles" }, el("h2", { id: "h-bundles", text: "Bundles" }), bundleTable)
			], "catalogs");
		});
	}

	function field(id, label, input) {
		input.id = id;
		input.name = id;
		return [el("label", { "for": id, text: label }), input];
	}

	function pageResolve(gen, params) {
		loading("Resolver", "resolve");
		return all("/v1/catalogs").then(function (cats) {
			if (gen !== generation) return;
			var catSel = el("select", { required: true }, cats.map(function (c) {
				return el("option", { value: c.name, text: c.name, selected: c.name === params.catalog });
			}));
			var pkgIn = el("input", { type: "text", required: true, list: "pkg-names", autocomplete: "off", value: params["package"] || "" });
			var chIn = el("input", { type: "text", autocomplete: "off", placeholder: "default channel", value: params.channel || "" });
			var semSel = el("select", null, ["classic", "v1", "v1-deps"].map(function (s) { return el("option", { value: s, text: s }); }));
			var names = el("datalist", { id: "pkg-names" });
			var out = el("section", { id: "result", "aria-live": "polite", "aria-labelledby": "h-result" });
			var form = el("form", { className: "resolve", id: "resolve-form" },
				field("r-catalog", "Catalog", catSel), field("r-package", "Package", pkgIn),
				field("r-channel", "Channel (optional)", chIn), field("r-semantics", "Semantics", semSel),
				el("button", { type: "submit", text: "Resolve" }));
			function loadNames() {
				names.textContent = "";
				if (!catSel.value) return;
				all("/v1/catalogs/" + seg(catSel.value) + "/packages").then(function (pk) {
					pk.forEach(function (p) { names.appendChild(el("option", { value: p.name })); });
				}).catch(function () {});
			}
			catSel.addEventListener("change", loadNames);
			loadNames();
			form.addEventListener("submit", function (ev) {
				ev.preventDefault();
				var req = { package: pkgIn.value.trim() };
				if (chIn.value.trim()) req.channel = chIn.value.trim();
				var body = { semantics: semSel.value, catalogs: [{ name: catSel.value }], requests: [req] };
				out.textContent = "";
				out.appendChild(el("p", { className: "muted", text: "Resolving…" }));
				api("/v1/resolve", { method: "POST", body: body }).then(function (r) {
					out.textContent = "";
					out.appendChild(el("h2", { id: "h-result", text: "Result" }));
					if (r.satisfiable) {
						out.appendChild(el("p", { className: "ok", text: "Satisfiable: " + r.selected.length + " bundle" + (r.selected.length === 1 ? "" : "s") + " would be installed." }));
						out.appendChild(table("Selected bundles", [
							{ label: "Bundle", get: function (s) { return s.bundle; } },
							{ label: "Package", get: function (s) { return s.catalog && s.catalog.charAt(0) !== "@" ? link("#/catalogs/" + seg(s.catalog) + "/packages/" + seg(s["package"]), s["package"]) : s["package"]; } },
							{ label: "Version", get: function (s) { return s.version || ""; } },
							{ label: "Channel", get: function (s) { return s.channel || ""; } },
							{ label: "Catalog", get: function (s) { return s.catalog; } }
						], r.selected));
						if (r.steps && r.steps.length)
							out.appendChild(table("Why", [
								{ label: "Bundle", get: function (s) { return s.bundle; } },
								{ label: "Reason", get: function (s) { return s.reason; } },
								{ label: "Replaces", get: function (s) { return s.replaces || ""; } }
							], r.steps));
					} else {
						out.appendChild(el("p", { className: "bad", text: "Not satisfiable (" + r.kind + ")." }));
						out.appendChild(el("pre", { className: "explain", text: r.explanation }));
						if (r.constraints && r.constraints.length)
							out.appendChild(el("ul", null, r.constraints.map(function (c) { return el("li", { text: c }); })));
					}
					if (r.stats)
						out.appendChild(el("p", { className: "muted", text: "SAT calls " + r.stats.satCalls + ", variables " + r.stats.variables + ", constraints " + r.stats.constraints }));
				}).catch(function (err) {
					out.textContent = "";
					out.appendChild(el("h2", { id: "h-result", text: "Result" }));
					out.appendChild(problemBox(err));
				});
			});
			show("Resolver", [
				el("p", { text: "Pick a package (and a channel) of a catalog: see which bundles would be installed and why, or why nothing fits." }),
				cats.length ? form : empty("No catalog to resolve against."), names, out
			], "resolve");
			if (cats.length && params["package"]) form.requestSubmit ? form.requestSubmit() : null;
		});
	}

	function optional(gen, title, navKey, path, emptyText, cols) {
		loading(title, navKey);
		return all(path, 1000).then(function (items) {
			if (gen !== generation) return;
			show(title, [items.length ? table(items.length + " " + title.toLowerCase(), cols, items) : empty(emptyText)], navKey);
		}, function (err) {
			if (gen !== generation) return;
			if (err && (err.status === 404 || err.status === 405 || err.status === 501))
				show(title, [empty("This server does not offer " + title.toLowerCase() + ".")], navKey);
			else throw err;
		});
	}

	function pageRepositories(gen) {
		return optional(gen, "Repositories", "repositories", "/v1/repositories",
			"No repository is registered (POST /v1/repositories or the configuration file).", [
				{ label: "Name", get: function (r) { return link("#/repositories/" + seg(r.name), r.name); } },
				{ label: "URL", get: function (r) { return el("code", { text: r.url }); } },
				{ label: "Branch", get: function (r) { return r.branch || ""; } },
				{ label: "Forge", cls: "wide", get: function (r) { return r.forge && r.forge.kind ? r.forge.kind : ""; } },
				{ label: "Head commit", get: function (r) { return r.headCommit ? el("code", { text: String(r.headCommit).slice(0, 12) }) : "—"; } },
				{ label: "Fetched", cls: "wide", get: function (r) { return fmtDate(r.fetchedAt) || "never"; } }
			]);
	}

	function conclusionSpan(c) {
		return el("span", { className: c === "success" ? "ok" : c === "failure" ? "bad" : null, text: c || "—" });
	}

	function pageRepository(gen, name) {
		var base = "/v1/repositories/" + seg(name);
		loading("Repository " + name, "repositories");
		return Promise.all([api(base), api(base + "/pulls")]).then(function (res) {
			if (gen !== generation) return;
			var r = res[0], pulls = res[1].items || [];
			var facts = el("dl", { className: "facts" },
				el("dt", { text: "URL" }), el("dd", null, el("code", { text: r.url })),
				el("dt", { text: "Branch" }), el("dd", { text: r.branch }),
				el("dt", { text: "Forge" }), el("dd", { text: r.forge && r.forge.kind !== "none" ? r.forge.kind + " " + (r.forge.project || "") + " (" + (r.forge.report || "") + ")" : "none" }),
				el("dt", { text: "Merge" }), el("dd", { text: r.merge || "off" }),
				el("dt", { text: "Head commit" }), el("dd", null, r.headCommit ? el("code", { text: r.headCommit }) : "—"),
				el("dt", { text: "Fetched" }), el("dd", { text: fmtDate(r.fetchedAt) || "never" }));
			var pullTable = pulls.length ? table(pulls.length + " pull requests", [
				{ label: "Pull request", get: function (p) { return link("#/repositories/" + seg(name) + "/pulls/" + p.number, "#" + p.number); } },
				{ label: "Title", cls: "wide", get: function (p) { return p.title || ""; } },
				{ label: "Author", get: function (p) { return p.author || ""; } },
				{ label: "State", get: function (p) { return p.state; } },
				{ label: "Checks", get: function (p) { return conclusionSpan(p.conclusion); } },
				{ label: "Runs", cls: "num", get: function (p) { return p.checks; } },
				{ label: "Updated", cls: "wide", get: function (p) { return fmtDate(p.updatedAt); } }
			], pulls) : empty("No pull request yet: they appear with the forge's webhooks.");
			show("Repository " + name, [
				el("p", { className: "crumbs" }, link("#/repositories", "Repositories"), " / ", name),
				facts,
				el("section", { "aria-labelledby": "h-pulls" }, el("h2", { id: "h-pulls", text: "Pull requests" }), pullTable)
			], "repositories");
		});
	}

	function pagePull(gen, name, number) {
		var base = "/v1/repositories/" + seg(name) + "/pulls/" + seg(number);
		loading("Pull request #" + number, "repositories");
		return api(base).then(function (p) {
			if (gen !== generation) return;
			var latest = p.checks && p.checks[0], doc = latest && latest.result;
			var facts = el("dl", { className: "facts" },
				el("dt", { text: "Title" }), el("dd", { text: p.title || "—" }),
				el("dt", { text: "Author" }), el("dd", { text: p.author || "—" }),
				el("dt", { text: "State" }), el("dd", { text: p.state }),
				el("dt", { text: "Head" }), el("dd", null, p.headSha ? el("code", { text: p.headSha }) : "—"),
				el("dt", { text: "Approvals" }), el("dd", { text: (p.approvals || []).join(", ") || "none" }),
				el("dt", { text: "Conclusion" }), el("dd", null, conclusionSpan(latest && latest.conclusion)),
				p.mergeError ? el("dt", { text: "Merge" }) : null, p.mergeError ? el("dd", { className: "bad", text: p.mergeError }) : null);
			var parts = [el("p", { className: "crumbs" }, link("#/repositories", "Repositories"), " / ", link("#/repositories/" + seg(name), name), " / #" + number), facts];
			if (doc) {
				var findings = [];
				(doc.checks || []).forEach(function (c) {
					(c.annotations || []).forEach(function (a) { findings.push({ check: c.id, a: a }); });
				});
				parts.push(el("section", { "aria-labelledby": "h-checks" }, el("h2", { id: "h-checks", text: "Checks" }), table("Checks of the newest run", [
					{ label: "Check", get: function (c) { return c.id; } },
					{ label: "Result", get: function (c) { return conclusionSpan(c.conclusion); } },
					{ label: "Findings", cls: "num", get: function (c) { return (c.annotations || []).length; } },
					{ label: "Summary", get: function (c) { return c.summary || ""; } }
				], doc.checks || [])));
				parts.push(el("section", { "aria-labelledby": "h-findings" }, el("h2", { id: "h-findings", text: "Findings (" + findings.length + ")" }),
					findings.length ? table("Findings", [
						{ label: "Where", get: function (f) { return el("code", { text: f.a.path ? f.a.path + (f.a.line ? ":" + f.a.line : "") : "(the change)" }); } },
						{ label: "Level", get: function (f) { return el("span", { className: f.a.level === "failure" ? "bad" : null, text: f.a.level }); } },
						{ label: "Rule", get: function (f) { return f.check + "/" + f.a.code; } },
						{ label: "Message", get: function (f) { return f.a.message; } }
					], findings) : empty("No finding.")));
			} else {
				parts.push(empty("Not checked yet."));
			}
			parts.push(el("section", { "aria-labelledby": "h-runs" }, el("h2", { id: "h-runs", text: "Runs" }), (p.checks || []).length ? table("Every check of this pull request, newest first", [
				{ label: "Head", get: function (c) { return el("code", { text: String(c.headSha).slice(0, 12) }); } },
				{ label: "Result", get: function (c) { return conclusionSpan(c.conclusion); } },
				{ label: "Job", cls: "num", get: function (c) { return c.job; } },
				{ label: "At", get: function (c) { return fmtDate(c.createdAt); } }
			], p.checks) : empty("No run.")));
			show("Pull request #" + number, parts, "repositories");
		});
	}

	function pageJobs(gen) {
		return optional(gen, "Jobs", "jobs", "/v1/jobs", "The job queue is empty.", [
			{ label: "Id", cls: "num", get: function (j) { return j.id; } },
			{ label: "Kind", get: function (j) { return j.kind; } },
			{ label: "State", get: function (j) { return el("span", { className: j.state === "failed" ? "bad" : j.state === "succeeded" ? "ok" : null, text: j.state }); } },
			{ label: "Repository", cls: "wide", get: function (j) { return j.repository || ""; } },
			{ label: "Attempts", cls: "num", get: function (j) { return j.attempts + "/" + j.maxAttempts; } },
			{ label: "Updated", cls: "wide", get: function (j) { return fmtDate(j.updatedAt); } },
			{ label: "Error", get: function (j) { return j.error || ""; } }
		]);
	}

	/* ------------------------------------------------------------ router */

	function route() {
		var gen = ++generation;
		var h = location.hash.replace(/^#/, "") || "/";
		var q = {};
		var qi = h.indexOf("?");
		if (qi >= 0) {
			h.slice(qi + 1).split("&").forEach(function (kv) {
				var i = kv.indexOf("=");
				if (i > 0) q[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
			});
			h = h.slice(0, qi);
		}
		var parts = h.split("/").filter(function (s) { return s.length; }).map(decodeURIComponent);
		var p;
		if (!parts.length || (parts[0] === "catalogs" && parts.length === 1)) p = pageCatalogs(gen);
		else if (parts[0] === "catalogs" && parts.length === 2) p = pageCatalog(gen, parts[1]);
		else if (parts[0] === "catalogs" && parts.length === 4 && parts[2] === "packages") p = pagePackage(gen, parts[1], parts[3]);
		else if (parts[0] === "resolve") p = pageResolve(gen, q);
		else if (parts[0] === "repositories" && parts.length === 2) p = pageRepository(gen, parts[1]);
		else if (parts[0] === "repositories" && parts.length === 4 && parts[2] === "pulls") p = pagePull(gen, parts[1], parts[3]);
		else if (parts[0] === "repositories") p = pageRepositories(gen);
		else if (parts[0] === "jobs") p = pageJobs(gen);
		else { show("Not found", [el("p", null, "No page here. ", link("#/", "Back to the catalogs"))], null); return; }
		p.catch(function (err) {
			if (gen !== generation) return;
			show("Error", [problemBox(err)], null);
		}).then(function () {
			if (gen === generation && document.activeElement !== tokenInput) main.focus({ preventScroll: true });
		});
	}

	document.getElementById("token-form").addEventListener("submit", function (ev) {
		ev.preventDefault();
		try {
			if (tokenInput.value) sessionStorage.setItem(TOKEN_KEY, tokenInput.value);
			else sessionStorage.removeItem(TOKEN_KEY);
		} catch (e) { /* storage unavailable: the token lasts until reload */ }
		route();
	});
	tokenInput.value = token();
	window.addEventListener("hashchange", route);
	route();
})();
