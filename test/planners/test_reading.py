"""Reading requests for what matters: each everyday phenomenon gives the goal a careful person would check."""

from __future__ import annotations

import pytest

from homiebot.planners.instructions import Fetch, GoTo, Move, Things, Toggle
from homiebot.planners.reading import read_request, spell
from homiebot.planners.understanding import understand_request


def goals(text: str) -> list:
    reading = read_request(text)
    assert not reading.unsure, reading.unsure
    return reading.plan.goals


def moves(text: str) -> list[tuple[str, str | None]]:
    """What the planner's reading moves where: (the first thing's phrase, its destination) for each Move."""
    return [(g.things.names[0], g.dest) for g in understand_request(text).plan.goals if isinstance(g, Move)]


@pytest.mark.parametrize("text", [
    "yo robot!! could you maybe put the green can in the fridge for me 🙏 cheers",
    "pls put the green can in the fridge, ta",
    "the green can in the fridge please, thank you so much :)",
])
def test_filler_and_politeness_change_nothing(text):
    assert goals(text) == [Move(Things(names=("green can",)), "fridge")]


@pytest.mark.parametrize("text, thing, place", [
    ("put the red mug on the desk, no sorry, the white one", "white mug", "desk"),
    ("move the banana to the sofa... wait, I mean the bed", "banana", "bed"),
    ("the blue book goes on the shelf - not the shelf, the tv stand", "blue book", "tv stand"),
])
def test_a_correction_replaces_what_it_corrects(text, thing, place):
    assert goals(text) == [Move(Things(names=(thing,)), place)]


@pytest.mark.parametrize("text, expected", [
    # the thing named again with where it goes: that place replaces the first one, the denied one is dropped
    ("Put the cup from the sofa on the kitchen table - sorry, the cup goes in the sink, not the table.",
     [Move(Things(names=("cup on the sofa",)), "sink")]),
    # the denied place says which one is corrected (not the cabinet said last); 'the cabinet' is the office one said before
    ("Move the towel out of the office cabinet onto the bed and close the cabinet. Wait, not the bed, the bathroom shelf.",
     [Move(Things(names=("towel in the office cabinet",)), "bathroom shelf"), Toggle("office cabinet", open=False)]),
])
def test_a_correction_says_which_place_it_replaces(text, expected):
    assert goals(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Both apples in the kitchen drawer, then shut it and the fridge.",
     [Move(Things(kind="apple", at_least=2), "kitchen drawer"), Toggle("kitchen drawer", open=False), Toggle("fridge", open=False)]),
    ("the fridge, the office drawer and the bathroom cabinet are open, close them all please",
     [Toggle("fridge", open=False), Toggle("office drawer", open=False), Toggle("bathroom cabinet", open=False)]),
    # 'it' is the last place said that has a door, not the shelf said after it; the place is the destination too
    ("put the bowl from the dining room shelf in the kitchen cabinet and close it",
     [Move(Things(names=("bowl on the dining room shelf",)), "kitchen cabinet"), Toggle("kitchen cabinet", open=False)]),
])
def test_what_close_it_and_close_them_all_name(text, expected):
    assert goals(text) == expected


def test_close_it_is_never_the_shelf_said_after_the_door():
    toggles = [g for g in goals("put the bowl in the kitchen cabinet from the dining room shelf and close it") if isinstance(g, Toggle)]
    assert toggles == [Toggle("kitchen cabinet", open=False)]


def test_a_cancelled_thing_is_dropped():
    assert goals("put the towel on the bed and the soap on the shelf - actually forget the soap") == [
        Move(Things(names=("towel",)), "bed")]


@pytest.mark.parametrize("text", ["bring a mug to the desk, any will do", "put one of the mugs on the desk, I don't mind which",
                                  "either mug on the desk please"])
def test_either_any_means_any_candidate(text):
    assert goals(text) == [Move(Things(kind="mug", count=1), "desk")]


@pytest.mark.parametrize("text, thing, place", [
    ("the bowl on the sofa is dirty", "bowl on the sofa", "kitchen sink"),
    ("the pear in the bedroom drawer will go off", "pear in the bedroom drawer", "fridge"),
    ("my yogurt... I mean the peach on the desk should be kept cold", "peach on the desk", "fridge"),
])
def test_a_reason_implies_a_place(text, thing, place):
    assert goals(text) == [Move(Things(names=(thing,)), place)]


@pytest.mark.parametrize("word, meant", [("drwer", "drawer"), ("bathrom", "bathroom"), ("cabnet", "cabinet"), ("frige", "fridge"),
                                         ("teh", "the"), ("opne", "open"), ("towls", "towels"), ("mgu", "mug"),
                                         ("getting", "getting"), ("bowl", "bowl"), ("cup", "cup"), ("swap", "swap"),
                                         ("beer", "beer")])
def test_typos_are_read_as_the_word_meant_and_ordinary_words_are_left_alone(word, meant):
    assert spell(word) == meant


def test_a_request_full_of_typos():
    assert goals("opne the drwer in the bedrom and put the yelow sponge in it") == [
        Toggle("bedroom drawer", True), Move(Things(names=("yellow sponge",)), "bedroom drawer")]


@pytest.mark.parametrize("text, expected", [
    ("Please you the kitchen drawer close.", [Toggle("kitchen drawer", False)]),
    ("Book of the tv stand, you bring to bed.", [Move(Things(names=("book on the tv stand",)), "bed")]),
    ("Apple from bathroom cabinet please put in fridge", [Move(Things(names=("apple in the bathroom cabinet",)), "fridge")]),
])
def test_non_native_grammar(text, expected):
    assert goals(text) == expected


def test_asides_and_states_are_not_commands():
    assert goals("the fridge is wide open again, no idea who left it like that. shut it please") == [Toggle("fridge", False)]
    assert goals("I want a bowl for my cereal, bring any bowl to the table") == [Move(Things(kind="bowl", count=1), "table")]


def test_rooms_qualify_places_and_lists_of_rooms_share_the_place():
    assert goals("all drawers are open, close the ones in the office and the bedroom") == [
        Toggle("office drawer", False), Toggle("bedroom drawer", False)]
    assert goals("put the candle on the shelf in the living room") == [Move(Things(names=("candle",)), "living room shelf")]


def test_a_thing_named_by_its_colour_alone():
    assert goals("the purple thing on the counter, put it on the bed") == [
        Move(Things(names=("purple thing on the kitchen counter",)), "bed")]


def test_fetch_and_go_to():
    assert goals("could you grab me the remote") == [Fetch("remote", pick=True)]
    assert goals("head over to the kitchen pls") == [GoTo("kitchen")]


def test_the_planner_keeps_the_clause_reader_for_what_only_it_reads():
    assert understand_request("if there is no book in the drawer, put one in it").plan.goals[0].__class__.__name__ == "IfAbsent"
    assert understand_request("hide the red toy block inside something that can be shut").plan.goals[0].dest_kind == "closable"


def test_what_cannot_be_placed_is_said():
    reading = read_request("the mug, you know the drill")
    assert reading.unsure == ["where the mug should go"]


@pytest.mark.parametrize("text, expected", [
    ("Both towels go in the bathroom cabinet, and shut the cabinet once they're in.",
     [Move(Things(kind="towel", at_least=2), "bathroom cabinet"), Toggle("bathroom cabinet", open=False)]),
    ("both bowls on the dining table pls, dinner soon", [Move(Things(kind="bowl", at_least=2), "dining room table")]),
    ("mugs everywhere again, put both in the kitchen sink", [Move(Things(kind="mug"), "kitchen sink")]),
    ("Apples: both of them in the fridge. And the book from the sofa on the shelf.",
     [Move(Things(kind="apple", at_least=2), "fridge"), Move(Things(names=("book on the sofa",)), "shelf")]),
    ("put every mug in the sink", [Move(Things(kind="mug"), "sink")]),
    ("put the mugs in the sink", [Move(Things(kind="mug"), "sink")]),
    # not every one: a number of them, a colour, or a place that narrows them
    ("put some mugs in the sink", [Move(Things(names=("mug",)), "sink")]),
    ("put the red mugs in the sink", [Move(Things(names=("red mug",)), "sink")]),
    ("put a mug in the sink", [Move(Things(names=("mug",)), "sink")]),
])
def test_quantities_read_as_every_one_of_the_kind_or_not(text, expected):
    assert goals(text) == expected


@pytest.mark.parametrize("text, expected", [
    # a list of things shares the place said after it
    ("the apple and the pear on the desk are going soft, put them in the fridge",
     [("apple on the desk", "fridge"), ("pear on the desk", "fridge")]),
    # a sentence that opens with where things are
    ("On the bed there is a towel and a book. Towel to the bathroom shelf, book on the desk.",
     [("towel on the bed", "bathroom shelf"), ("book on the bed", "desk")]),
    # a heading with a colon, then where each one goes
    ("The mug and the candle in the office cabinet: the mug in the kitchen sink, the candle on the tv stand.",
     [("mug in the office cabinet", "kitchen sink"), ("candle in the office cabinet", "tv stand")]),
])
def test_where_a_list_of_things_is_said_once_for_all_of_them(text, expected):
    assert moves(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("The towel, it is in the bathroom cabinet, please put it on the bed.", [("towel in the bathroom cabinet", "bed")]),
    ("cup + bowl both in the sink pls", [("cup", "sink"), ("bowl", "sink")]),
    ("Pear onto the dining table, and the soap into the bedroom drawer. No, hang on, the bathroom cabinet.",
     [("pear", "dining room table"), ("soap", "bathroom cabinet")]),
])
def test_where_a_thing_is_said_by_the_way_and_lists_joined_by_a_plus(text, expected):
    assert moves(text) == expected


def test_a_place_to_empty_said_first_is_where_the_things_after_it_are():
    assert goals("Empty the office cabinet: the mug to the kitchen sink, the book on the bed.") == [
        Move(Things(names=("mug in the office cabinet",)), "kitchen sink"), Move(Things(names=("book in the office cabinet",)), "bed")]


@pytest.mark.parametrize("text, expected", [
    # each place is where its own thing goes: a later place is not a destination the first thing could have
    ("stuff out of the sink pls, sponge on the kitchen counter, soap on the shelf in the bathroom",
     [("sponge", "kitchen counter"), ("soap", "bathroom shelf")]),
    ("the can on the table and the cup on the bed, both into the fridge",
     [("can on the table", "fridge"), ("cup on the bed", "fridge")]),
])
def test_thing_place_pairs_in_a_list(text, expected):
    assert moves(text) == expected


def test_sentences_of_different_kinds_are_each_read_by_the_reader_that_suits_them():
    read = understand_request("The pear on the desk goes in the fridge if there's no fruit in it, otherwise on the kitchen counter. "
                              "Oh, and the mug - no, the cup on the sofa - goes in the sink.")
    assert not read.unsure and "if fridge has no fruit move pear on the desk into it, else -> kitchen counter" in read.statement()
    assert read.statement().endswith("move cup on the sofa -> sink"), read.statement()


@pytest.mark.parametrize("text, expected", [
    # a destination that points back: where the last thing went, or the thing named
    ("The mug goes in the sink. Put the plate next to it.", [("mug", "sink"), ("plate", "sink")]),
    ("Put the mug in the sink and the plate there too.", [("mug", "sink"), ("plate", "sink")]),
    ("Sponge from the dining table to the bathroom shelf. And the soap from the living room shelf next to it.",
     [("sponge from the dining table", "bathroom shelf"), ("soap from the living room shelf", "bathroom shelf")]),
    # the place said with the orange is where it is, once the request says where it goes
    ("The lemon goes in the fridge, and the orange on the bathroom shelf - same place as the lemon.",
     [("lemon", "fridge"), ("orange on the bathroom shelf", "fridge")]),
])
def test_a_destination_said_as_it_there_or_the_same_place(text, expected):
    assert moves(text) == expected
    assert not understand_request(text).unsure
