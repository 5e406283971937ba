"""A ReAct agent whose last answer is long: a chat model's multi-paragraph reply (a week's itinerary,
~3,000 characters, ~80 lines at 80 columns) — taller than the TUI's value viewer at 80x24 to 120x40,
which is what tests/tui_conversation.rs opens it at (the viewer must open on the reply's first line,
not in its middle).

The model is langchain_core's GenericFakeChatModel (answers scripted, tool calls included); the graph,
tool execution, message ids and reducers are real LangGraph / langgraph-prebuilt (create_react_agent).
  'itinerary' : a system prompt, one user turn; the model calls get_weather, then answers at length.
"""
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, create_react_agent

from common import D, Fixture

warnings.filterwarnings("ignore", message="create_react_agent has been moved")


class FakeToolModel(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bind_tools (the agent binds its tools to the model)."""

    def bind_tools(self, tools, **kwargs):
        return self


@tool
def get_weather(city: str) -> str:
    """The weather forecast for a city, this week."""
    return f"{city}: 16-21°C all week, showers on Tuesday and Friday afternoons"


DAYS = [
    ("Monday", "the Louvre",
     "Start early at the Pyramid entrance (book the 9:00 slot online; the queue at the Carrousel entrance is "
     "shorter if you forgot). Give yourself three hours: the Denon wing for the Italian paintings and the "
     "Winged Victory, then the Sully wing's medieval moat. Lunch in the Palais-Royal gardens, then walk the "
     "Tuileries to the Orangerie for Monet's Water Lilies, which need no more than an hour."),
    ("Tuesday", "the Marais (showers in the afternoon)",
     "Walk the Place des Vosges in the morning while it is dry, then the Musée Carnavalet (free, the history "
     "of Paris) when the rain starts. Falafel on the rue des Rosiers for lunch; the afternoon is for the "
     "Picasso museum and the small galleries of the rue de Turenne. Dinner: the bistros around the rue de "
     "Bretagne, booked a day ahead."),
    ("Wednesday", "Montmartre",
     "Take line 12 to Abbesses (the deepest station: take the lift), climb to the Sacré-Cœur before the crowds, "
     "then lose yourself in the streets behind the Place du Tertre. The Musée de Montmartre has the gardens "
     "Renoir painted. Come down through the rue Lepic market and end at the Canal Saint-Martin for the evening."),
    ("Thursday", "Versailles",
     "The RER C takes 40 minutes; go on a weekday and be at the gate at 9:00. The château takes the morning; "
     "rent a bike or a rowing boat for the gardens and the Trianons in the afternoon. The fountain shows run "
     "on some weekdays only: check the calendar before you choose the day."),
    ("Friday", "the Left Bank (showers in the afternoon)",
     "Notre-Dame's towers in the morning, then the Sainte-Chapelle when the sun is on the windows. The Musée "
     "d'Orsay is the rainy-afternoon plan: the impressionists on the fifth floor, the clock window over the "
     "Seine. Evening in Saint-Germain: the Café de Flore is an institution, the side streets are better value."),
    ("Saturday", "markets and the Seine",
     "The Marché d'Aligre in the morning (the covered hall for cheese, the square for everything else), a "
     "picnic on the Île Saint-Louis, then a boat on the Seine at golden hour — the Vedettes du Pont-Neuf leave "
     "every half hour. Dinner in the Latin Quarter, then the Eiffel Tower's lights on the hour."),
    ("Sunday", "slow day",
     "The Jardin du Luxembourg, a late brunch, the Musée Rodin's garden (the garden-only ticket is cheap), and "
     "a last walk along the quays. If you fly in the evening, leave three hours for the RER B to Charles de "
     "Gaulle on a Sunday: works often close part of the line."),
]


def itinerary():
    parts = ["Here is a week in Paris, planned around the forecast (16-21°C, showers on Tuesday and Friday "
             "afternoons, so those days keep an indoor plan for the afternoon)."]
    for day, where, text in DAYS:
        parts.append(f"**{day} — {where}.** {text}")
    parts.append("Practical notes: a Navigo Découverte pass (Monday to Sunday) covers every metro, bus and RER "
                 "ride in the region including Versailles and the airports; museums are free on the first "
                 "Sunday of some months; most close one day a week (the Louvre on Tuesdays, Orsay on Mondays), "
                 "which is why the days above are in this order. Book the Louvre, Versailles and the "
                 "Sainte-Chapelle online. Tell me your budget and I will add hotels and restaurants.")
    return "\n\n".join(parts)


def script():
    return [
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_w_1",
                                   "type": "tool_call"}],
                  usage_metadata={"input_tokens": 120, "output_tokens": 18, "total_tokens": 138},
                  response_metadata={"model_name": "fake-gpt", "finish_reason": "tool_calls"}),
        AIMessage(itinerary(),
                  usage_metadata={"input_tokens": 160, "output_tokens": 1900, "total_tokens": 2060},
                  response_metadata={"model_name": "fake-gpt", "finish_reason": "stop"}),
    ]


def main():
    fx = Fixture("agent_answer")
    graph = create_react_agent(FakeToolModel(messages=iter(script())), ToolNode([get_weather]),
                               checkpointer=fx.saver)
    cfg = {"configurable": {"thread_id": "itinerary"}}
    out = graph.invoke({"messages": [SystemMessage("You are a travel planner. Answer in full."),
                                     HumanMessage("Plan my week in Paris, day by day.")]}, cfg, **D())
    fx.event(f"itinerary: {len(out['messages'])} messages, the last {len(out['messages'][-1].content)} chars")
    fx.dump(graph, "itinerary")
    fx.finish()


if __name__ == "__main__":
    main()
