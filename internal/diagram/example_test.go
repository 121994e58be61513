package diagram_test

import (
	"fmt"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/statechart"
)

func Example() {
	config := []byte(`{"id": "door", "initial": "closed", "states": {
  "closed": {"on": {"OPEN": "opened"}},
  "opened": {"after": {"500": "closed"}}}}`)
	m, err := statechart.Compile(config, nil)
	if err != nil {
		panic(err)
	}
	c := diagram.New(m, config)
	// c.SVG(&diagram.SVGOptions{Active: []string{"door.opened"}}) draws it
	// with the state opened lit.
	fmt.Print(c.Mermaid())
	// Output:
	// stateDiagram-v2
	//     [*] --> door_closed
	//     state "closed" as door_closed
	//     state "opened" as door_opened
	//     door_closed --> door_opened : OPEN
	//     door_opened --> door_closed : after 500ms
}
