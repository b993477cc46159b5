// Hosted PIN page (paymentsd). Encrypts the PIN in the browser and submits it
// once. The PIN never leaves this page in clear: it is written into an
// ISO 9564-1 format 4 plain PIN field and sealed with AES-256-GCM under a key
// agreed by ECDH (P-256) with the service's PIN transport key and HKDF-SHA256
// (salt: the one-time public key, info "paymentsd-pin-block-v1"); the card id
// is the associated data. See docs/cards-data.md.
(function () {
  "use strict";
  var INFO = "paymentsd-pin-block-v1";
  var root = document.getElementById("pin-entry");
  var form = document.getElementById("pin-form");
  var status = document.getElementById("pin-status");
  var enc = new TextEncoder();

  function b64url(bytes) {
    var s = "";
    bytes = new Uint8Array(bytes);
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function unb64url(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  // pinField is the 16-byte format 4 plain PIN field of pin.
  function pinField(pin) {
    var nib = [4, pin.length], f = new Uint8Array(16), i;
    for (i = 0; i < 14; i++) nib.push(i < pin.length ? pin.charCodeAt(i) - 48 : 10);
    for (i = 0; i < 8; i++) f[i] = (nib[2 * i] << 4) | nib[2 * i + 1];
    crypto.getRandomValues(f.subarray(8));
    return f;
  }

  async function seal(pin, cardId, serverKey) {
    var server = await crypto.subtle.importKey("raw", unb64url(serverKey), { name: "ECDH", namedCurve: "P-256" }, false, []);
    var eph = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, false, ["deriveBits"]);
    var ephRaw = new Uint8Array(await crypto.subtle.exportKey("raw", eph.publicKey));
    var shared = await crypto.subtle.deriveBits({ name: "ECDH", public: server }, eph.privateKey, 256);
    var ikm = await crypto.subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    var key = await crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: ephRaw, info: enc.encode(INFO) },
      ikm, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
    var iv = crypto.getRandomValues(new Uint8Array(12));
    var field = pinField(pin);
    var ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv: iv, additionalData: enc.encode(cardId) }, key, field);
    field.fill(0);
    return { ephemeralPublicKey: b64url(ephRaw), iv: b64url(iv), ciphertext: b64url(ct) };
  }

  function tell(type) {
    var origin = root.dataset.origin;
    if (window.parent !== window && origin) window.parent.postMessage({ type: type }, origin);
  }

  function show(text, kind) {
    status.textContent = text;
    status.className = kind;
  }

  form.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    var pin = form.elements.pin.value, confirmPin = form.elements.confirm.value;
    if (!/^[0-9]{4,12}$/.test(pin)) return show("A PIN is 4 to 12 digits.", "error");
    if (pin !== confirmPin) return show("The two PINs differ.", "error");
    form.elements.submit.disabled = true;
    try {
      var sealed = await seal(pin, root.dataset.card, root.dataset.key);
      form.reset();
      var res = await fetch(root.dataset.action, {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ submitToken: root.dataset.submit, encryptedPin: sealed })
      });
      if (!res.ok) throw new Error("HTTP " + res.status);
      form.hidden = true;
      show("Your PIN is set.", "done");
      tell("pin.set");
    } catch (e) {
      show("The PIN could not be set. Ask for a new PIN page.", "error");
      tell("pin.error");
    }
  });
  show("", "");
  root.dataset.ready = "true";
})();
