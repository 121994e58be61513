package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// store is the in-memory workspace behind the tools: sprints, the tasks in
// them, and a static list of country codes. Its results really change, so
// the invalidation notices describe something true.
type store struct {
	mu      sync.Mutex
	sprints []*sprint
	tasks   []*task
	nextID  int
}

type sprint struct {
	ID   string
	Name string
}

type task struct {
	ID       string
	Title    string
	SprintID string
}

// countries is reference data: it never changes, hence "immutable".
var countries = []string{"BR", "DE", "FR", "IN", "JP", "US"}

func newStore() *store {
	return &store{
		sprints: []*sprint{{ID: "s1", Name: "Sprint 1"}, {ID: "s2", Name: "Sprint 2"}},
		tasks: []*task{
			{ID: "t1", Title: "Write the spec", SprintID: "s1"},
			{ID: "t2", Title: "Build the API", SprintID: "s1"},
			{ID: "t3", Title: "Ship it", SprintID: "s2"},
		},
		nextID: 3,
	}
}

// SprintView is a sprint as the tools return it.
type SprintView struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Tasks []TaskView `json:"tasks"`
}

// TaskView is a task as the tools return it.
type TaskView struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	SprintID string `json:"sprint_id"`
}

func (s *store) view(sp *sprint) SprintView {
	v := SprintView{ID: sp.ID, Name: sp.Name, Tasks: []TaskView{}}
	for _, t := range s.tasks {
		if t.SprintID == sp.ID {
			v.Tasks = append(v.Tasks, TaskView{t.ID, t.Title, t.SprintID})
		}
	}
	return v
}

func (s *store) listSprints() []SprintView {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SprintView, 0, len(s.sprints))
	for _, sp := range s.sprints {
		out = append(out, s.view(sp))
	}
	return out
}

func (s *store) findSprint(id string) (*sprint, error) {
	for _, sp := range s.sprints {
		if sp.ID == id {
			return sp, nil
		}
	}
	return nil, fmt.Errorf("no sprint %q", id)
}

func (s *store) createSprint(name string) (SprintView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name = strings.TrimSpace(name)
	if name == "" {
		return SprintView{}, fmt.Errorf("a sprint needs a name")
	}
	sp := &sprint{ID: fmt.Sprintf("s%d", s.nextID), Name: name}
	s.nextID++
	s.sprints = append(s.sprints, sp)
	return s.view(sp), nil
}

func (s *store) updateSprint(id, name string) (SprintView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, err := s.findSprint(id)
	if err != nil {
		return SprintView{}, err
	}
	if name = strings.TrimSpace(name); name != "" {
		sp.Name = name
	}
	return s.view(sp), nil
}

// deleteSprint deletes an empty sprint. A sprint that still has tasks is
// refused: deleting it would change the tasks too, which its policy does
// not declare.
func (s *store) deleteSprint(id string) (SprintView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, err := s.findSprint(id)
	if err != nil {
		return SprintView{}, err
	}
	v := s.view(sp)
	if n := len(v.Tasks); n > 0 {
		return SprintView{}, fmt.Errorf("sprint %q still has %d task(s); move them to another sprint first", id, n)
	}
	s.sprints = slices.DeleteFunc(s.sprints, func(x *sprint) bool { return x == sp })
	return v, nil
}

// updateTask retitles a task and/or moves it to another sprint, which
// changes both sprints' task lists: tasks.update invalidates sprints.* too.
func (s *store) updateTask(id string, title, sprintID *string) (TaskView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.tasks, func(t *task) bool { return t.ID == id })
	if i < 0 {
		return TaskView{}, fmt.Errorf("no task %q", id)
	}
	t := s.tasks[i]
	if sprintID != nil {
		if _, err := s.findSprint(*sprintID); err != nil {
			return TaskView{}, err
		}
	}
	if title != nil {
		if strings.TrimSpace(*title) == "" {
			return TaskView{}, fmt.Errorf("a task needs a title")
		}
		t.Title = strings.TrimSpace(*title)
	}
	if sprintID != nil {
		t.SprintID = *sprintID
	}
	return TaskView{t.ID, t.Title, t.SprintID}, nil
}
