import pytest

from homiebot.core.contracts import Action
from homiebot.core.parsing import FormatError, parse_planner_output

MODELS = ["NoMaD", "PixNav", "octo", "RT-1-X"]


@pytest.mark.parametrize("raw, action, target, place, model", [
    ('{"analysis": "x", "subtask": ["Go to", "fridge"], "model": "NoMaD"}', Action.GO_TO, "fridge", None, "NoMaD"),
    ('{"Analysis": "x", "Subtask": "[Put, green_can, fridge]", "Model": "rt-1-x"}', Action.PUT, "green_can", "fridge", "RT-1-X"),
    ('{"subtask": {"action": "pick", "target": "apple"}, "model": "RT1X"}', Action.PICK, "apple", None, "RT-1-X"),
    ('Sure! ```json\n{"analysis": "", "subtask": ["open", "fridge"], "model": "Octo"}\n```', Action.OPEN, "fridge", None, "octo"),
    ("Analysis: I see the fridge.\nSubtask: [Go to, fridge]\nModel: NoMaD", Action.GO_TO, "fridge", None, "NoMaD"),
    ("analysis:  close it\nSUBTASK:[close , fridge ]\nmodel : octo.", Action.CLOSE, "fridge", None, "octo"),
    ("Here is my answer.\nAnalysis: the can is on the table\nSubtask: [Put, 'green_can', \"brown_table\"]\nModel: **RT-1-X**\nThanks",
     Action.PUT, "green_can", "brown_table", "RT-1-X"),
    ("Analysis: moving on\nSubtask1: [Go to, blue_sofa] (PixNav)", Action.GO_TO, "blue_sofa", None, "PixNav"),
    ("Analysis: GOTO works too\nSubtask: [goto, kitchen]\nModel: nomad", Action.GO_TO, "kitchen", None, "NoMaD"),
    ("Analysis: done\nSubtask: [End]\nModel: None", Action.END, None, None, None),
    ('{"analysis": "done", "subtask": ["End"], "model": null}', Action.END, None, None, None),
])
def test_accepted_forms(raw, action, target, place, model):
    out = parse_planner_output(raw, MODELS)
    assert (out.subtask.action, out.subtask.target, out.subtask.place, out.model) == (action, target, place, model)


@pytest.mark.parametrize("raw, hint", [
    ("", "empty"),
    ("I think we should go to the kitchen.", "No subtask found"),
    ("Analysis: x\nSubtask: [Fly, kitchen]\nModel: NoMaD", "not in the action list"),
    ("Analysis: x\nSubtask: [Go to, kitchen]\nModel: GPT-5", "not in the model list"),
    ("Analysis: x\nSubtask: [Go to, kitchen]", "No model was chosen"),
    ("Analysis: x\nSubtask: [Put, green_can]\nModel: RT-1-X", "Put needs the object and the place"),
    ("Analysis: x\nSubtask: [Pick]\nModel: RT-1-X", "exactly one target"),
    ('{"analysis": "x", "subtask": 42, "model": "octo"}', "must be a list"),
])
def test_rejections_explain_what_to_fix(raw, hint):
    with pytest.raises(FormatError, match=hint):
        parse_planner_output(raw, MODELS)


def test_model_list_in_message_names_the_available_models():
    with pytest.raises(FormatError) as err:
        parse_planner_output("Subtask: [Go to, kitchen]\nModel: SuperNav", ["NoMaD", "PixNav"])
    assert "[NoMaD, PixNav]" in str(err.value)
