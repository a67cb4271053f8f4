/** A point on the map. */
interface Point {
  /** Latitude in degrees. */
  lat: number;
  lng: number, readonly label?: string
}

interface Place extends Point {
  name: string
  kind: PlaceKind
}

type PlaceKind = "city" | "park" | "museum";
type Tags = Array<string>;

/**
 * Plan a trip through places.
 * @param stops The places to visit, in order.
 */
export function plan_trip(stops: Place[], mode: Mode = "walk", tags?: Tags, budget: number | null = null): void {}

type Mode = 'walk' | 'bike' | 'car';

/** Record measurements. */
export function record(readings: Record<string, number>, window: [number, number], meta: { [key: string]: string },
                       levels: ReadonlyArray<1 | 2 | 3>, note: string | undefined, extra: any): void {}

/** Label a point. */
export function label(point: Point & { text: string }, flag: true | false, choice: "a" | 1 | null): void {}
