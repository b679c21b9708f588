// sparsetir explorer: the view as a link. The URL's fragment (#...) holds what is shown: the
// step, the panes and their sizes, wrapping, the diff, the pinned line, and (in a served page)
// the script, deflated and base64url-encoded, so that opening the link reopens the same view.
// A fragment never reaches a server, and it works for a page opened from a file.
"use strict";
const Share = (function () {
  const VERSION = "1";

  function toBase64Url(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function fromBase64Url(text) {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }

  async function through(stream, bytes) {
    return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
  }

  /** A text as it travels in a link: "z" + deflated UTF-8 in base64url (or "b" + plain UTF-8 in
   * base64url where the browser cannot compress). */
  async function packText(text) {
    const bytes = new TextEncoder().encode(text);
    if (typeof CompressionStream === "undefined") return "b" + toBase64Url(bytes);
    return "z" + toBase64Url(await through(new CompressionStream("deflate-raw"), bytes));
  }

  async function unpackText(packed) {
    const bytes = fromBase64Url(packed.slice(1));
    if (packed[0] === "b") return new TextDecoder().decode(bytes);
    if (packed[0] === "z") return new TextDecoder().decode(await through(new DecompressionStream("deflate-raw"), bytes));
    throw new Error("not a script this explorer wrote");
  }

  /** The fragment of a view: `view` maps names to strings (or null/undefined: left out);
   * `script`, when given, is packed. */
  async function fragment(view, script) {
    const params = new URLSearchParams({ v: VERSION });
    for (const [key, value] of Object.entries(view)) if (value !== null && value !== undefined && value !== "") params.set(key, String(value));
    if (script !== undefined && script !== null) params.set("script", await packText(script));
    return "#" + params.toString();
  }

  /** The view a fragment holds ({name: string}, the script unpacked), or null when it holds none. */
  async function read(hash) {
    if (!hash || hash.length < 2) return null;
    const params = new URLSearchParams(hash.slice(1));
    if (params.get("v") !== VERSION) return null;
    const view = Object.fromEntries(params.entries());
    delete view.v;
    if (view.script !== undefined) view.script = await unpackText(view.script);
    return view;
  }

  // The fragment follows every change of the view; packing is asynchronous, so only the newest
  // of several quick changes is written.
  let latest = 0;
  async function update(view, script) {
    const mine = ++latest;
    const hash = await fragment(view, script);
    if (mine !== latest || hash === location.hash) return;
    try {
      history.replaceState(history.state, "", hash);
    } catch (err) {
      location.replace(hash);
    }
  }

  return { fragment, read, update, packText, unpackText };
})();
