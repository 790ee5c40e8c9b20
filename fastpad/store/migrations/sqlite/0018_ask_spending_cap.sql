-- Version 18: an optional spending cap on questions (POST /v1/ask, fp ask) per token.
--
-- ask_cap is the most provider tokens (the provider's usage.total_tokens) the
-- token's questions may spend; NULL means no cap. ask_spent is what its
-- answers have spent so far. A question is charged to the token and to every
-- token it was delegated from, so a delegated token cannot spend past its
-- parent's cap.

ALTER TABLE tokens ADD COLUMN ask_cap INTEGER CHECK (ask_cap IS NULL OR ask_cap > 0);
ALTER TABLE tokens ADD COLUMN ask_spent INTEGER NOT NULL DEFAULT 0;
