"""ReviewService: agents propose, people decide.

Every agent change to prose is a *turn*: ops against one note, validated, diffed
per block and stored. Nothing reaches the note until it is accepted, and accepting
is a separate transaction: the prose through the one write path
(``NoteService.apply_edit``) and the turn's edges, calendar events and citation edges
through the services that own them (:mod:`fastpad.review.effects`), all or nothing.

Who may do what (spec: Agents):

- **propose** — ``notes:propose``, with a session from :meth:`open_session` and
  anchor handles from :meth:`fetch_with_handles`. A token with auto-apply has its
  prose applied at once, stamped ``unreviewed`` for good, and listed on Agent
  activity.
- **accept** — a signed-in person (a web session, or the operator): any turn on a
  note they can see, prose and edge/calendar ops; blocks become ``human_accepted``
  and cited sources become citations. Any *token* (an agent's or a person's CLI
  credential) needs ``turns:accept``, may accept only turns that same token
  opened, and only prose; its blocks become ``agent_accepted`` and the turn goes
  on Agent activity. Otherwise ``approve-not-permitted`` naming the review URL.
- **reject**, **revert**, **mark reviewed** — a signed-in person only; no token of
  any scope (``policy-denied``).
- **abandon** — the turn's own author.
- **read** (list, get, review) — a person sees every turn on notes they can see;
  an agent sees its own.

If the note moved while the turn waited, accept merges three ways
(:mod:`fastpad.review.landing`); a block both sides changed is a conflict that a
person resolves explicitly, and nothing lands until they do.

Every landing, decision and review goes to the turn's log (``turn_events``) with what it did outside the
prose (edges, events), which revert reads; accepts and reverts to the workspace audit log too (security/audit.py).
"""

from fastpad.review.decisions import Decisions
from fastpad.review.proposals import Proposals
from fastpad.review.queries import TurnQueries


class ReviewService(Proposals, Decisions, TurnQueries):
    """The review service whole: proposing (:mod:`fastpad.review.proposals`), deciding
    (:mod:`fastpad.review.decisions`) and reading turns (:mod:`fastpad.review.queries`), over
    what they share — the dependencies and the one landing path (:mod:`fastpad.review.core`)."""
