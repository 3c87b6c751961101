"""The heuristic planner: no language model and no privileged state.

It reads the instruction once (``planners/instructions.py`` lists the forms it understands), then
each round updates what it knows from perception only (the names and categories visible in the
four views, and what seems to rest on what) and from feedback, and chooses the next subtask:

* targets are grounded with names, aliases, word overlap and sentence embeddings, strictly: a phrase
  naming a class or furniture type means only things of that type, its colour and room words must be
  in the name, and a plain type name ("the sink") is not taken for a room-named one (bathroom_sink)
  while rooms remain unseen; a target not yet seen makes it explore: first the rooms it has glimpsed
  (the one a place's name says, or where such furniture usually stands, first), then surfaces not yet
  seen from close enough for small things, then closed containers it can open;
* a place the user names for an object ("the green toy block in the fridge") is searched first: found
  (in its room first), reached and opened; a thing still not seen there is tried by the name the
  description gives (too small to see in small views);
* it opens a destination container before picking the object up (one hand), and a container before
  taking something out of it;
* it repairs from typed feedback: D1/D2 -> go there (again); L3 -> open the container the feedback
  names; L1 -> put down what it holds; F2 -> forget the name and ground again or explore;
  E1 -> retry with another model, then give up on that object if an alternative exists;
  E2 -> find the dropped object and pick it up again.

An instruction that refers to a demonstration ("like I showed you", "where I keep it") takes its place
from the segments recalled from the demonstration memory (``planners/recalled.py``); with none that
fits, it asks or reports. Instructions are read by ``homiebot.planners.understanding`` (free-form: questions, politeness,
pronouns, several destinations, relative places, "somewhere in the kitchen", "one of", conditions,
negation). The first round's analysis states the goal it understood (also in the episode record).
What it cannot read it asks about in the first round ([Ask, ...]); with nobody to ask it reports it
and ends (termination "reported"). With someone to ask, whether a phrase is open is decided from the
scene (``planners/asking.py``, ``planners/candidates.py``): the things seen that its class or
category, colour, place and room words fit. Several fit: it asks about what differs (colour, place,
kind), places first; one or none while rooms are unseen: it looks at them first (and, for a small
thing, into the sinks); one: it is meant, no question; none after that (a phrase naming a kind only):
it asks. Answers narrow the candidates the same way (a name, "the kitchen one", "the one on the
shelf", yes / no); one it cannot use is asked about again, then reported. An instruction of which
nothing can be read is refused at the start. "Go to X" (a thing, a piece of furniture or a room) ends
once the robot is there. A thing still not seen when every room was
visited, every surface seen from close by (and approached where something resting on it may hide it)
and every container opened is reported by name, with what of its type was seen instead; every End's
analysis says why it ends. Before an End that would say "done", two checks run: the goals against what it
believes now (a thing not where it goes, a container still open, fewer than "both", one dropped on the way:
``goals.py``'s ``unmet``), and the request against the plan (``planners/coverage.py``: a thing, destination,
closing, condition or quantity the request names that no goal covers, e.g. "leave it on the sofa" after a
"smth to drink" nobody read). Either ends it as a report (termination "reported") naming what was done and
what was not; with someone to ask, a part not read is asked about first and its answer's goals join the plan.

With mapped perception (``request.scene_map`` is set) it reads only the semantic map's summary, never
the observation's labels: what it knows are map instance ids (``can_1``) with their categories,
colours, supports and door states, plus the rooms of the floor plan. Instruction phrases ground by
category and colour ("green can" -> the can the map calls green); it names instances by id, which
the map's grounding accepts. A target not in the map makes it explore: ``[Explore, room]`` room by
room (the robot's own room first, then by word similarity) when a model offers Explore, else Go to
the rooms; then surfaces from close by and closed containers, as in oracle perception.

The planner (``planner.py``) assembles parts with one job each around one episode's shared state
(``episode.py``: the memory of ``memory.py``, the plan, the grounder, the round and the report):

* ``perceiving.py`` and ``feedback.py`` fold each round's perception and feedback into memory;
* ``dialogue.py`` queues questions and folds answers into the plan; ``scene_check.py`` decides from the scene
  whether an open phrase needs a question or a look first;
* ``goals.py`` works through the plan's goals, ``targets.py`` names the things and places a Move means,
  ``said_places.py`` looks where the user said a thing is;
* ``referents.py`` and ``map_referents.py`` ground phrases to what is known (seen, or on the map);
* ``searching.py`` chooses where to look next and reports what a complete search did not find;
* ``acting.py`` turns an intent into the round's subtask (``Decision``), going there and freeing the hand first.
"""

from .acting import Decision as _Decision
from .feedback import MAX_FAILS
from .perceiving import small_thing_reach as _small_thing_reach
from .planner import HeuristicPlanner
from .scene_check import LOOK_EXTRA, LOOK_RESERVE
from .searching import THIN
from .words import ARTICLES, GROUPS, ROOM_WORDS, USUAL_ROOMS, USUALLY_ONE

__all__ = ["ARTICLES", "GROUPS", "LOOK_EXTRA", "LOOK_RESERVE", "MAX_FAILS", "ROOM_WORDS", "THIN", "USUALLY_ONE", "USUAL_ROOMS",
           "HeuristicPlanner", "_Decision", "_small_thing_reach"]
