interface CreateEventArgs {
  /** The event's title. */
  title: string;
  start: string;
  duration_minutes?: number;
  attendees: string[];
  visibility: "public" | "private";
}

/**
 * Create a calendar event.
 * @param args The event.
 * @param args.start When it starts (ISO 8601).
 * @param args.duration_minutes How long it lasts.
 */
export function create_event(args: CreateEventArgs): Promise<string> {
  return Promise.resolve(`created ${args.title}`);
}

/**
 * Delete events.
 * @param options.ids Which events.
 */
export function delete_events(options: { ids: number[]; notify?: boolean }): void {}

/** Move an event. */
export function move_event({ id, minutes = 15 }: { id: number; minutes?: number }): void {}

/** A tool with one plain parameter named input: a string, not flattened. */
export function echo(input: string): string { return input; }
