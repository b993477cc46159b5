-- The replay guard of signed UMA messages (issue 20): every nonce accepted
-- from a counterparty institution, kept for the signature window. It lived in
-- each process's memory, so that with several nodes behind one UMA domain a
-- message replayed to another node was accepted again.
CREATE TABLE uma_nonces (
    nonce     TEXT PRIMARY KEY,
    signed_at BIGINT NOT NULL
);
CREATE INDEX uma_nonces_signed_at ON uma_nonces (signed_at);
