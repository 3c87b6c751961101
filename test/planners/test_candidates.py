"""Which seen things a phrase covers, what a question about them asks, and what an answer picks."""

from __future__ import annotations

from homiebot.planners.candidates import candidates, pinned, question, read_answer, things_from

KNOWN = {"kitchen": "room", "bathroom": "room", "yellow_sponge": "sponge", "yellow_sponge_2": "sponge", "pink_sponge": "sponge",
         "kitchen_counter": "kitchen_counter", "brown_shelf": "shelf", "white_shelf": "shelf", "cabinet": "cabinet",
         "bathroom_cabinet": "cabinet", "yellow_pear": "pear", "green_banana": "banana", "blue_can": "can", "white_mug": "mug",
         "sink": "sink", "bathroom_sink": "sink", "black_table": "table"}
SUPPORT = {"yellow_sponge": "kitchen_counter", "yellow_sponge_2": "brown_shelf", "pink_sponge": "white_shelf",
           "yellow_pear": "kitchen_counter", "green_banana": "black_table"}
THINGS = things_from(KNOWN, SUPPORT, {"cabinet": "kitchen", "sink": "kitchen", "kitchen_counter": "kitchen"})


def test_a_class_covers_its_things_and_a_colour_or_place_narrows_them() -> None:
    assert candidates("the sponge", THINGS, True) == ["pink_sponge", "yellow_sponge", "yellow_sponge_2"]
    assert candidates("pink sponge", THINGS, True) == ["pink_sponge"]
    assert candidates("yellow sponge", THINGS, True) == ["yellow_sponge", "yellow_sponge_2"]  # a name, and its twin
    assert candidates("the yellow sponge on the brown shelf", THINGS, True) == ["yellow_sponge_2"]
    assert candidates("the sponge in the kitchen", THINGS, True) == ["yellow_sponge"]
    assert candidates("the pear", THINGS, True) == ["yellow_pear"]
    assert candidates("the red sponge", THINGS, True) == []


def test_category_words_map_through_the_household_vocabulary() -> None:
    assert candidates("a piece of fruit", THINGS, True) == ["green_banana", "yellow_pear"]
    assert candidates("something to drink", THINGS, True) == ["blue_can"]
    assert candidates("drink", THINGS, True) == ["blue_can"]


def test_places_by_type_room_and_name() -> None:
    assert candidates("the shelf", THINGS, False) == ["brown_shelf", "white_shelf"]
    assert candidates("the kitchen sink", THINGS, False) == ["sink"]  # the sink standing in the kitchen
    assert candidates("the sink", THINGS, False) == ["bathroom_sink", "sink"]  # a type's name with several of the type
    assert candidates("the table", THINGS, False) == ["black_table"]
    assert pinned("bathroom cabinet", THINGS, False) == "bathroom_cabinet"
    assert pinned("sink", THINGS, False) is None  # only a type's name: there may be others


def test_a_question_asks_about_what_differs() -> None:
    colour = question("the sponge", ["pink_sponge", "yellow_sponge"], THINGS, True)
    assert colour == "Which sponge do you mean: the pink one or the yellow one?"
    place = question("the sponge", ["yellow_sponge", "yellow_sponge_2"], THINGS, True)
    assert place == "Which sponge do you mean: the one on the kitchen counter or the one on the brown shelf?"
    kind = question("a piece of fruit", ["green_banana", "yellow_pear"], THINGS, True)
    assert kind == "Which one do you mean: the green banana or the yellow pear?"
    assert question("the shelf", ["brown_shelf", "white_shelf"], THINGS, False) == "Which shelf do you mean: the brown shelf or the white shelf?"


def test_answers_as_people_give_them() -> None:
    sponges = ["pink_sponge", "yellow_sponge", "yellow_sponge_2"]
    assert read_answer("the yellow sponge on the brown shelf", "sponge", sponges, THINGS, True).chosen == "yellow_sponge_2"
    assert read_answer("I mean the pink sponge on the white shelf.", "sponge", sponges, THINGS, True).chosen == "pink_sponge"
    assert read_answer("the one on the shelf", "sponge", ["yellow_sponge", "yellow_sponge_2"], THINGS, True).chosen == "yellow_sponge_2"
    assert read_answer("the pink one", "sponge", sponges, THINGS, True).chosen == "pink_sponge"
    assert not read_answer("the yellow sponge", "sponge", sponges, THINGS, True).usable  # two fit: asked again
    assert read_answer("the yellow sponge, the one called yellow sponge 2", "sponge", sponges, THINGS, True).chosen == "yellow_sponge_2"
    for said in ("the kitchen cabinet", "kitchen_cabinet", "the kitchen one", "the one in the kitchen"):
        assert read_answer(said, "cabinet", ["cabinet", "bathroom_cabinet"], THINGS, False).chosen == "cabinet", said
    assert read_answer("It goes in the bathroom cabinet.", "cabinet", ["cabinet", "bathroom_cabinet"], THINGS, False).chosen == "bathroom_cabinet"
    assert read_answer("the banana", "a piece of fruit", ["green_banana", "yellow_pear"], THINGS, True).chosen == "green_banana"


def test_yes_no_and_unusable_answers() -> None:
    assert read_answer("yes", "pear", ["yellow_pear"], THINGS, True).chosen == "yellow_pear"
    assert read_answer("no", "pear", ["yellow_pear"], THINGS, True).excluded == ("yellow_pear",)
    assert not read_answer("yes", "sponge", ["pink_sponge", "yellow_sponge"], THINGS, True).usable  # yes to which?
    assert not read_answer("hmm, whatever you like", "cabinet", ["cabinet", "bathroom_cabinet"], THINGS, False).usable
    assert not read_answer("", "cabinet", ["cabinet", "bathroom_cabinet"], THINGS, False).usable


def test_an_answer_about_a_thing_not_seen_yet_is_kept_to_search_for() -> None:
    got = read_answer("I mean the red mug on the brown desk.", "mug", ["white_mug"], THINGS, True)
    assert got.chosen is None and got.description == "red mug on the brown desk"
    got = read_answer("It goes on the bedroom chair.", "chair", [], THINGS, False)
    assert got.description == "bedroom chair"
