# Acceptance run of issue 5 against a fresh sandbox server (stdlib Python 3):
#   PAYMENTS_SANDBOX_TOKEN=demo-sandbox:demo-secret ./paymentsd --database-url sqlite:/tmp/mm.db &
#   python3 scripts/money_movement_acceptance.py
# Funds a customer, pays US bank (ACH, RTP, wire), EUR IBAN, BTC (Spark), an internal
# account and a RECEIVING-locked USD->MXN quote, plus the 901 failure and 906 ACH-return
# magic amounts; checks the pricing identity, final states, events and balances.
import json, urllib.request, base64, time, sys
from decimal import Decimal
import os
API = os.environ.get("PAYMENTS_API", "http://127.0.0.1:8080/2025-10-13")
AUTH = "Basic " + base64.b64encode(os.environ.get("PAYMENTS_TOKEN", "demo-sandbox:demo-secret").encode()).decode()
FAILURES = []
def call(method, path, body=None, key=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(API + path, data=data, method=method, headers={"Authorization": AUTH})
    if data is not None: req.add_header("Content-Type", "application/json")
    if key: req.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(req) as r: return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e: return e.code, json.loads(e.read() or b"null")
def ok(st, body, want=(200, 201)):
    if st not in (want if isinstance(want, tuple) else (want,)): print("UNEXPECTED", st, json.dumps(body)[:400]); sys.exit(1)
    return body
ok(*call("PATCH", "/config", {"webhookEndpoint": "http://127.0.0.1:9100/h", "supportedCurrencies": [
    {"currencyCode": c, "minAmount": 1, "maxAmount": 10**12, "enabledTransactionTypes": ["INCOMING", "OUTGOING"]} for c in ["USD", "EUR", "MXN", "BTC"]]}))
ag = ok(*call("GET", "/customers/agreements"))["data"][0]
def customer(name):
    return ok(*call("POST", "/customers", {"customerType": "INDIVIDUAL", "fullName": name, "birthDate": "1990-01-15", "nationality": "US",
        "address": {"line1": "1 Main St", "city": "Austin", "state": "TX", "postalCode": "78701", "country": "US"},
        "agreementConsents": [{"type": ag["type"], "termsVersion": ag["version"], "acceptedAt": "2026-11-01T00:00:00Z", "ipAddress": "203.0.113.7", "acceptanceMethod": "CHECKBOX"}]}))["id"]
A, B = customer("Alice Sender"), customer("Bob Receiver")
def acct(c, cur):
    return [a for a in ok(*call("GET", f"/customers/internal-accounts?customerId={c}&currency={cur}"))["data"]][0]
a_usd, b_usd = acct(A, "USD"), acct(B, "USD")
ok(*call("POST", f"/sandbox/internal-accounts/{a_usd['id']}/fund", {"amount": 10_000_000}, key="fund-1"))
spark = [i for i in acct(A, "BTC")["fundingPaymentInstructions"] if "spark" in json.dumps(i).lower()]
spark_addr = [v for v in json.dumps(spark[0]).replace('"', ' ').split() if v.startswith("sprt") or v.startswith("spark")][0]
ben = {"beneficiaryType": "INDIVIDUAL", "fullName": "Alice Sender", "countryOfResidence": "US"}
def ext(cur, info):
    return ok(*call("POST", "/customers/external-accounts", {"customerId": A, "currency": cur, "accountInfo": info}))["id"]
x_us = ext("USD", {"accountType": "USD_ACCOUNT", "routingNumber": "021000021", "accountNumber": "123456789", "bankAccountType": "CHECKING", "beneficiary": ben})
x_eu = ext("EUR", {"accountType": "EUR_ACCOUNT", "iban": "DE89370400440532013000", "beneficiary": dict(ben, countryOfResidence="DE")})
x_mx = ext("MXN", {"accountType": "MXN_ACCOUNT", "clabeNumber": "032180000118359719", "beneficiary": ben})
x_bt = ext("BTC", {"accountType": "SPARK_WALLET", "address": spark_addr})
def quote(name, dst, side, amt, rail=None, execute=True):
    d = {"destinationType": "ACCOUNT", "accountId": dst}
    if rail: d["paymentRail"] = rail
    q = ok(*call("POST", "/quotes", {"source": {"sourceType": "ACCOUNT", "accountId": a_usd["id"]}, "destination": d,
        "lockedCurrencySide": side, "lockedCurrencyAmount": amt, "immediatelyExecute": execute}, key="q-" + name))
    S, F, R = q["totalSendingAmount"], q["feesIncluded"], q["totalReceivingAmount"]
    rate = Decimal(str(q["exchangeRate"])); sd, rd = q["sendingCurrency"]["decimals"], q["receivingCurrency"]["decimals"]
    U = rate.scaleb(sd - rd); resid = Decimal(S) - F - R * U
    okid = Decimal(0) <= resid < max(Decimal(1), U)
    if not okid: FAILURES.append(name + ": pricing identity")
    print(f"{name:10s} {q['sendingCurrency']['code']}->{q['receivingCurrency']['code']} sent={S} fees={F} recv={R} rate={rate} residual={resid:.4f} identity={'OK' if okid else 'FAIL'} status={q['status']}")
    return q
qs = [quote("ach", x_us, "SENDING", 10000, "ACH"), quote("rtp", x_us, "SENDING", 20000, "RTP"), quote("wire", x_us, "SENDING", 300000, "WIRE"),
      quote("eur-iban", x_eu, "SENDING", 50000), quote("btc-spark", x_bt, "SENDING", 20000), quote("internal", b_usd["id"], "SENDING", 12345),
      quote("mxn-recv", x_mx, "RECEIVING", 100000), quote("fail-901", x_us, "SENDING", 5901, "ACH"), quote("return-906", x_us, "SENDING", 7906, "ACH")]
final = {}
for _ in range(120):
    for q in qs:
        t = ok(*call("GET", f"/transactions/{q['transactionId']}"))
        final[q["id"]] = t
    states = [final[q["id"]]["status"] for q in qs]
    ret = final[qs[-1]["id"]]
    if all(s in ("COMPLETED", "FAILED") for s in states) and ret.get("failureReason") == "PAYOUT_RETURNED": break
    time.sleep(0.5)
spent = 0
for q in qs:
    t = final[q["id"]]
    ev = ok(*call("GET", f"/events?resourceId={t['id']}&limit=100"))["data"]
    evs = [e["type"] for e in sorted(ev, key=lambda e: e["id"])]
    print(f"{t['status']:10s} failure={t.get('failureReason','-'):16s} refund={(t.get('refund') or {}).get('status','-'):10s} rail={t.get('paymentRail')} events={evs}")
    if t["status"] == "COMPLETED": spent += q["totalSendingAmount"]
bal = acct(A, "USD")["balance"]["amount"]; bbal = acct(B, "USD")["balance"]["amount"]
if bal != 10_000_000 - spent: FAILURES.append("sender balance")
if bbal != 12345: FAILURES.append("receiver balance")
expected = ["COMPLETED"] * 7 + ["FAILED", "FAILED"]
if [final[q["id"]]["status"] for q in qs] != expected: FAILURES.append("final states")
print("A balance", bal, "expected", 10_000_000 - spent, "OK" if bal == 10_000_000 - spent else "MISMATCH")
print("B balance", bbal, "expected", 12345, "OK" if bbal == 12345 else "MISMATCH")
print("FAIL:", FAILURES) if FAILURES else print("PASS")
sys.exit(1 if FAILURES else 0)
