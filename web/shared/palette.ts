/** Colours of bodies (by body, or by run when runs are overlaid) and of the energy curves. */

export const BODY_COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6'];
export const OBSTACLE_COLOUR = '#a3a7ad';

export const CURVE_COLOURS = {
  kinetic: '#f28e2b',
  potential: '#59a14f',
  contact: '#b07aa1',
  total: '#222222',
  target: '#7f7f7f',
  alpha: '#4e79a7',
} as const;

export function bodyColour(index: number): string {
  return BODY_COLOURS[index % BODY_COLOURS.length];
}
